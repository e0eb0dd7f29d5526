"""docs/integrators.md: every file it shows is the file in examples/integrators, and each one runs here."""

import re
import textwrap
from datetime import date
from decimal import Decimal

import pytest

from pb_headless import DeclarationError
from tests.hosts.lifespan import serving
from tests.integrators.example_site import REPO, SITE

DOC = REPO / "docs" / "integrators.md"
SHOWN = re.compile(r"<!-- file: (?P<path>[^ ]+) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)
EXCERPT = re.compile(r"<!-- excerpt: (?P<path>[^ ]+) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)
SATELLITE = "examples.integrators.satellite.pb_reviews"
API = "/api/pb/v1"
USERS = {"1": {"id": 1, "username": "shop-app"}}


PRODUCTS = [
    {"id": 1, "name": "Kettle", "category": "kitchen", "price": Decimal("25.00"), "published": True},
    {"id": 2, "name": "Mug", "category": "kitchen", "price": Decimal("7.50"), "published": True},
    {"id": 3, "name": "Novel", "category": "books", "price": Decimal("12.99"), "published": True},
    {"id": 4, "name": "Atlas", "category": "books", "price": Decimal("40.00"), "published": False},
    {"id": 5, "name": "Sticker", "category": "misc", "price": Decimal("0.00"), "published": True},
]
ORDERS = [
    (1, 2, date(2026, 1, 5)),
    (2, 4, date(2026, 1, 10)),
    (3, 1, date(2026, 2, 1)),
    (3, 3, date(2026, 2, 15)),
    (4, 1, date(2026, 2, 20)),
    (5, 10, date(2026, 3, 1)),
]


def shown_files():
    return {match["path"]: match["body"] for match in SHOWN.finditer(DOC.read_text())}


def test_every_file_the_guide_shows_is_the_file_in_the_repository():
    shown = shown_files()
    assert shown, "docs/integrators.md shows no file"
    for path, body in shown.items():
        assert (REPO / path).read_text() == body, f"docs/integrators.md shows an outdated {path}"


def test_every_excerpt_the_guide_shows_is_in_its_file():
    excerpts = list(EXCERPT.finditer(DOC.read_text()))
    assert {match["path"] for match in excerpts} == {
        "examples/starlette_host/app.py",
        "examples/fastapi_host/app.py",
        "examples/raw_asgi_host/app.py",
    }
    for match in excerpts:
        source = (REPO / match["path"]).read_text()
        indented = (textwrap.indent(match["body"], " " * width) for width in range(0, 13, 4))
        assert any(candidate in source for candidate in indented), f"outdated excerpt of {match['path']}"


def test_the_guide_shows_every_file_of_the_example_site_and_satellite():
    files = {str(path.relative_to(REPO)) for path in SITE.rglob("*") if path.suffix in (".py", ".toml")}
    files -= {
        "examples/integrators/__init__.py",
        "examples/integrators/core/__init__.py",
        "examples/integrators/core/App/__init__.py",
    }
    assert set(shown_files()) == files


@pytest.fixture
async def shop(database, site_folder):
    """The example host (examples/integrators/host.py) on each database, with its rows and the satellite."""
    from core.App.models import orders, products

    from examples.integrators.host import create_app
    from examples.integrators.satellite.pb_reviews import install as install_reviews
    from examples.integrators.satellite.pb_reviews import reviews

    app = create_app(str(database.url), components=[SATELLITE], user_loader=USERS.get)
    await install_reviews(database)
    async with serving(app) as client:
        for row in PRODUCTS:
            await database.execute(products.insert().values(**row))
        for product_id, quantity, ordered_on in ORDERS:
            await database.execute(
                orders.insert().values(product_id=product_id, quantity=quantity, ordered_on=ordered_on)
            )
        for product_id, rating, body in ((1, 5, "Boils fast"), (3, 2, "Too long")):
            await database.execute(
                reviews.insert().values(product_id=product_id, rating=rating, body=body, published=True)
            )
        yield client, database


async def token(database, scopes, **options):
    from pb_headless import TokenStore

    _, plain = await TokenStore(database).create(f"t-{scopes}", scopes, **options)
    return {"Authorization": f"Bearer {plain}"}


async def test_the_declaration_file_publishes_products_under_its_own_scopes(shop):
    client, database = shop
    auth = await token(database, "catalog.read")
    listed = await client.get(API + "/objects/products", headers=auth)
    assert listed.status_code == 200
    # Sorted by name; Atlas is unpublished and the free Sticker is narrowed out by the declaration's query.
    assert [(item["name"], item["price"]) for item in listed.json()["data"]] == [
        ("Kettle", "25.00"),
        ("Mug", "7.50"),
        ("Novel", "12.99"),
    ]
    assert listed.json()["meta"]["limit"] == 10
    unreachable = await client.get(API + "/objects/products", headers=await token(database, "products.read"))
    assert unreachable.status_code == 404


async def test_the_custom_route_aggregates_orders_and_products_on_every_database(shop):
    client, database = shop
    auth = await token(database, "reports.read", user_id=1)
    report = await client.get(API + "/reports/sales", headers=auth)
    assert report.status_code == 200
    assert report.json() == {
        "data": [
            {"category": "books", "orders": 3, "units": 5, "revenue": "91.96"},
            {"category": "kitchen", "orders": 2, "units": 6, "revenue": "80.00"},
            {"category": "misc", "orders": 1, "units": 10, "revenue": "0.00"},
        ],
        "meta": {"since": None, "requested_by": "shop-app"},
    }
    since = await client.get(API + "/reports/sales?since=2026-02-01", headers=auth)
    assert [row["category"] for row in since.json()["data"]] == ["books", "misc"]


async def test_the_custom_route_refuses_a_bad_date_and_a_token_without_its_scope(shop):
    client, database = shop
    auth = await token(database, "reports.read")
    bad = await client.get(API + "/reports/sales?since=yesterday", headers=auth)
    assert bad.status_code == 422
    assert bad.json()["details"] == {"since": ["must be a date of the form YYYY-MM-DD"]}
    forbidden = await client.get(API + "/reports/sales", headers=await token(database, "catalog.read"))
    assert (forbidden.status_code, forbidden.json()["required_scope"]) == (403, "reports.read")


async def test_the_satellite_publishes_reviews_next_to_the_sites_objects(shop):
    client, database = shop
    auth = await token(database, "catalog.read,reviews.read")
    objects = await client.get(API + "/objects", headers=auth)
    assert sorted(item["name"] for item in objects.json()["data"]) == ["products", "reviews"]
    reviews = await client.get(API + "/objects/reviews", headers=auth)
    assert [(item["product_id"], item["rating"]) for item in reviews.json()["data"]] == [(1, 5), (3, 2)]


async def test_the_hosts_own_page_is_untouched(shop):
    client, _ = shop
    page = await client.get("/")
    assert (page.status_code, page.text) == (200, "The shop's own home page.")
    assert (await client.get("/api/other")).status_code == 404


def test_a_broken_declaration_file_stops_the_start_naming_the_file(site_folder, tmp_path):
    from pb_headless import ApiRegistry

    broken = tmp_path / "api.py"
    broken.write_text((SITE / "core" / "App" / "api.py").read_text().replace('"searchable"', '"searchabel"'))
    with pytest.raises(DeclarationError, match=re.escape(f"{broken}: object 'products', key 'searchabel'")):
        ApiRegistry().load_file(broken)
