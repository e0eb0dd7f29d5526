"""docs/endpoints.md with the bodies of docs/endpoints.md, on every database."""

import re

from databases import Database

import pb_headless
from pb_headless import ApiRegistry, HeadlessAPI

API = "/api/pb/v1"


async def test_health_needs_no_token_and_names_the_version(demo):
    response = await demo.client.get(API + "/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "version": pb_headless.__version__}


async def test_health_is_503_when_the_database_does_not_answer(tmp_path):
    import httpx

    database = Database(f"sqlite:///{tmp_path}/missing-dir/nothing.db")
    api = HeadlessAPI(database, ApiRegistry())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://t") as client:
        response = await client.get("/health")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable" and body["error"] == "service_unavailable"
    assert "nothing.db" not in response.text and "Traceback" not in response.text


async def test_me_describes_the_token(demo):
    plain = await demo.token("articles.read,news.*", name="mobile app")
    response = await demo.client.get(API + "/me", headers=demo.auth(plain))
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    data = response.json()["data"]
    assert set(data) == {"name", "prefix", "scopes", "expires_at", "user", "objects", "rate_limit"}
    assert data["name"] == "mobile app"
    assert data["prefix"] == plain[:8]
    assert data["scopes"] == ["articles.read", "news.*"]
    assert data["expires_at"] is None and data["user"] is None
    assert data["objects"] == ["articles"]
    assert set(data["rate_limit"]) == {"limit", "remaining", "reset"}
    assert data["rate_limit"]["limit"] == 120


async def test_me_shows_the_expiry_with_an_offset(demo):
    plain = await demo.token("*", expires_at="2099-05-01T10:00:00")
    data = (await demo.client.get(API + "/me", headers=demo.auth(plain))).json()["data"]
    assert re.fullmatch(r"2099-05-01T10:00:00\+00:00", data["expires_at"])


async def test_objects_lists_only_what_the_token_reaches(demo):
    everything = await demo.token("*")
    authors_only = await demo.token("authors.read")
    writer = await demo.token("articles.write")
    names = lambda r: [o["name"] for o in r.json()["data"]]  # noqa: E731
    assert names(await demo.client.get(API + "/objects", headers=demo.auth(everything))) == [
        "articles",
        "authors",
    ]
    assert names(await demo.client.get(API + "/objects", headers=demo.auth(authors_only))) == ["authors"]
    assert names(await demo.client.get(API + "/objects", headers=demo.auth(writer))) == ["articles"]


async def test_objects_describes_each_object(demo):
    plain = await demo.token("*")
    response = await demo.client.get(API + "/objects", headers=demo.auth(plain))
    authors = next(o for o in response.json()["data"] if o["name"] == "authors")
    assert authors == {
        "name": "authors",
        "operations": ["list", "show"],
        "fields": ["id", "name", "email"],
        "filterable": ["name"],
        "sortable": ["name"],
        "searchable": ["name"],
        "with": [],
        "links": {"self": "http://testserver/api/pb/v1/objects/authors"},
    }
    articles = next(o for o in response.json()["data"] if o["name"] == "articles")
    assert articles["operations"] == ["list", "show", "create", "update", "delete"]
    assert articles["with"] == ["author", "comments"]


async def test_every_answer_carries_the_rate_limit_headers(demo):
    plain = await demo.token("*")
    for path, headers in (
        ("/health", {}),
        ("/me", {}),
        ("/me", demo.auth(plain)),
        ("/nothing", demo.auth(plain)),
    ):
        response = await demo.client.get(API + path, headers=headers)
        for header in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"):
            assert header in response.headers, (path, header)
