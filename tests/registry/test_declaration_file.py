"""docs/declarations.md and docs/library.md: a host points the registry at `core/App/api.py`.

Every declaration key (docs/declarations.md) is used here, and what each does is seen through HTTP on
every database.
"""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry

OBJECTS = "/api/pb/v1/objects"
SITE = "http://testserver/api/pb/v1"

API_FILE = '''
"""The site's declaration file."""

from core.App.models import books

API = {
    "books": {
        "model": books,
        "fields": ["title", "summary", "genre", "price", "pages", "released_on", "added_at", "writer_id"],
        "filterable": ["genre", "price", "pages"],
        "searchable": ["title", "summary"],
        "sortable": ["title", "pages"],
        "with": ["writer:id,name", "reviews:stars,text"],
        "per_page": 2,
        "max_per_page": 3,
        "default_sort": "-pages",
        "query": lambda select: select.where(books.c.price > 0),
        "operations": ["list", "show", "create", "update"],
        "writable": ["title", "genre", "price", "pages"],
        "rules": {"title": "required|string|max:200", "pages": "nullable|integer|min:1"},
        "scopes": {"read": "catalog.read", "write": "catalog.write"},
    },
    # A model may be named by its import path, as PHP names `Writer::class`.
    "writers": {"model": "core.App.models:writers", "fields": ["name"]},
}
'''


@pytest.fixture
async def site(site_database, site_folder, host_factory):
    registry = ApiRegistry().load_file(site_folder.write_api(API_FILE))
    host = await host_factory(site_database, registry)
    await host.api.startup()
    host.headers = host.auth(await host.token("*", name="all"))
    return host


async def get(host, path: str, headers: dict | None = None):
    return await host.client.get(f"{OBJECTS}{path}", headers=headers or host.headers)


def ids(response) -> list[int]:
    assert response.status_code == 200, response.text
    return [record["id"] for record in response.json()["data"]]


async def test_load_file_returns_the_registry_for_chaining(site_folder):
    registry = ApiRegistry()
    assert registry.load_file(site_folder.write_api("API = {}\n")) is registry


async def test_declared_objects_appear_in_objects_with_their_whitelists(site):
    response = await site.client.get(OBJECTS, headers=site.headers)
    assert response.json() == {
        "data": [
            {
                "name": "books",
                "operations": ["list", "show", "create", "update"],
                "fields": [
                    "id",
                    "title",
                    "summary",
                    "genre",
                    "price",
                    "pages",
                    "released_on",
                    "added_at",
                    "writer_id",
                ],
                "filterable": ["genre", "price", "pages"],
                "sortable": ["title", "pages"],
                "searchable": ["title", "summary"],
                "with": ["writer", "reviews"],
                "links": {"self": f"{SITE}/objects/books"},
            },
            {
                "name": "writers",
                "operations": ["list", "show"],
                "fields": ["id", "name"],
                "filterable": [],
                "sortable": [],
                "searchable": [],
                "with": [],
                "links": {"self": f"{SITE}/objects/writers"},
            },
        ]
    }


async def test_the_list_follows_default_sort_per_page_query_and_published(site):
    response = await get(site, "/books")
    # 3 is unpublished and 5 is free, which the file's `query` leaves out.
    assert ids(response) == [1, 2]
    meta = response.json()["meta"]
    assert meta.pop("next_cursor") and meta.pop("prev_cursor") is None  # docs/query.md, "Cursors"
    assert meta == {"total": 3, "count": 2, "limit": 2, "offset": 0, "has_more": True}
    assert ids(await get(site, "/books?limit=10")) == [1, 2, 4]  # max_per_page 3


async def test_the_whitelists_of_the_file_are_obeyed(site):
    response = await get(site, "/books?filter[isbn]=isbn-1&sort=-price&fields=isbn&with=writer.books&limit=3")
    assert ids(response) == [1, 2, 4]
    assert response.json()["meta"]["ignored"] == [
        "filter[isbn]",
        "sort=-price",
        "fields=isbn",
        "with=writer.books",
    ]
    assert all("isbn" not in record for record in response.json()["data"])
    assert ids(await get(site, "/books?filter[genre]=novel&sort=title")) == [2, 1]
    assert ids(await get(site, "/books?search=TRAIN")) == [2]
    assert ids(await get(site, "/books?filter[pages][lt]=1000")) == [2, 4]


async def test_relations_of_the_file_load_with_their_declared_columns(site):
    response = await get(site, "/books?with=writer,reviews&fields=title&limit=3")
    assert response.json()["data"] == [
        {
            "id": 1,
            "title": "War and Peace",
            "writer": {"id": 1, "name": "Лев Толстой"},
            "reviews": [{"id": 1, "stars": 5, "text": "Great"}],
        },
        {
            "id": 2,
            "title": "Anna Karenina",
            "writer": {"id": 1, "name": "Лев Толстой"},
            "reviews": [{"id": 3, "stars": 4, "text": "Good"}],
        },
        {"id": 4, "title": "Short stories", "writer": None, "reviews": []},
    ]


async def test_show_serves_only_rows_the_list_serves(site):
    assert (await get(site, "/books/1?fields=price,added_at")).json() == {
        "data": {"id": 1, "price": "12.50", "added_at": "2026-02-01T09:30:00+00:00"}
    }
    assert (await get(site, "/books/3")).status_code == 404
    assert (await get(site, "/books/5")).status_code == 404


async def test_the_scopes_map_names_the_scopes_tokens_need(site):
    own_name = site.auth(await site.token("books.read", name="by-object-name"))
    assert (await get(site, "/books", own_name)).json()["error"] == "unknown_object"
    reader = site.auth(await site.token("catalog.read", name="catalog-reader"))
    assert ids(await get(site, "/books", reader)) == [1, 2]
    response = await site.client.post(f"{OBJECTS}/books", headers=reader, json={"title": "New"})
    assert response.status_code == 403 and response.json()["required_scope"] == "catalog.write"


async def test_operations_writable_and_rules_govern_writes(site):
    writer = site.auth(await site.token("catalog.read,catalog.write", name="catalog-writer"))
    created = await site.client.post(
        f"{OBJECTS}/books", headers=writer, json={"title": "Resurrection", "price": "7.00", "pages": 400}
    )
    assert created.status_code == 201, created.text
    assert created.json()["data"]["title"] == "Resurrection"
    refused = await site.client.post(f"{OBJECTS}/books", headers=writer, json={"pages": 0, "isbn": "x"})
    assert refused.status_code == 422
    assert set(refused.json()["details"]) == {"title", "pages", "isbn"}
    deleted = await site.client.delete(f"{OBJECTS}/books/1", headers=writer)
    assert deleted.status_code == 405 and "DELETE" not in deleted.headers["allow"]


async def test_an_object_without_operations_is_read_only(site):
    response = await site.client.post(f"{OBJECTS}/writers", headers=site.headers, json={"name": "X"})
    assert response.status_code == 405


async def test_a_model_named_by_its_import_path_is_served(site):
    assert (await get(site, "/writers")).json()["data"] == [{"id": 1, "name": "Лев Толстой"}]


async def test_every_list_answer_of_a_declared_object_is_private_no_cache(site):
    assert (await get(site, "/books")).headers["cache-control"] == "private, no-cache"
    assert (await get(site, "/books/1")).headers["cache-control"] == "private, no-cache"


# -- `table`: an existing table, reflected ------------------------------------------------------------

TABLE_FILE = """
API = {
    "shelf": {
        "table": "site_books",
        "fields": ["title", "price", "pages", "released_on", "added_at"],
        "filterable": ["price", "released_on"],
        "sortable": ["pages"],
        "searchable": ["title"],
        "with": ["writer:id,name", "reviews:stars"],
        "default_sort": "-pages",
    },
}
"""


@pytest.fixture
async def shelf(site_database, site_folder, host_factory):
    registry = ApiRegistry().load_file(site_folder.write_api(TABLE_FILE))
    host = await host_factory(site_database, registry)
    await host.api.startup()
    host.headers = host.auth(await host.token("shelf.read", name="shelf"))
    return host


async def test_a_reflected_table_is_served_with_its_published_rows_only(shelf):
    response = await get(shelf, "/shelf?fields=title,price,released_on,added_at")
    assert response.json()["data"] == [
        {
            "id": 1,
            "title": "War and Peace",
            "price": "12.50",
            "released_on": "1869-01-01",
            "added_at": "2026-02-01T09:30:00+00:00",
        },
        {
            "id": 2,
            "title": "Anna Karenina",
            "price": "9.99",
            "released_on": "1878-01-01",
            "added_at": "2026-02-02T09:30:00+00:00",
        },
        {"id": 4, "title": "Short stories", "price": "5.00", "released_on": None, "added_at": None},
        {"id": 5, "title": "Free pamphlet", "price": "0.00", "released_on": None, "added_at": None},
    ]
    assert (await get(shelf, "/shelf/3")).status_code == 404


async def test_a_reflected_table_filters_sorts_and_searches_by_its_column_types(shelf):
    assert ids(await get(shelf, "/shelf?filter[price][gte]=9.99")) == [1, 2]
    assert ids(await get(shelf, "/shelf?filter[released_on][lt]=1870-01-01")) == [1]
    assert ids(await get(shelf, "/shelf?sort=pages")) == [5, 4, 2, 1]
    assert ids(await get(shelf, "/shelf?search=anna")) == [2]


async def test_a_reflected_table_loads_relations_found_by_its_foreign_keys(shelf):
    response = await get(shelf, "/shelf?with=writer,reviews&fields=id&limit=3")
    assert response.json()["data"] == [
        {"id": 1, "writer": {"id": 1, "name": "Лев Толстой"}, "reviews": [{"id": 1, "stars": 5}]},
        {"id": 2, "writer": {"id": 1, "name": "Лев Толстой"}, "reviews": [{"id": 3, "stars": 4}]},
        {"id": 4, "writer": None, "reviews": []},
    ]
