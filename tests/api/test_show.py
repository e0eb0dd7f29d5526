"""docs/endpoints.md GET one record, the single-record envelope, and docs/query.md ("One record")."""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry
from tests.support.demo import DECLARATIONS, articles

API = "/api/pb/v1/objects"


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read,authors.read"))
    return demo


async def show(host, path: str, status: int = 200) -> dict:
    response = await host.client.get(f"{API}/{path}", headers=host.headers)
    assert response.status_code == status, response.text
    return response.json()


async def test_show_answers_one_record_under_data(reader):
    assert await show(reader, "articles/1") == {
        "data": {
            "id": 1,
            "title": "Hello world",
            "body": "Body of Hello world",
            "category": "news",
            "price": "19.99",
            "rating": 4.5,
            "views": 10,
            "featured": False,
            "published_on": "2026-01-01",
            "created_at": "2026-01-01T12:00:00+00:00",
            "author_id": 1,
        }
    }


async def test_show_is_json_and_private_no_cache(reader):
    response = await reader.client.get(f"{API}/articles/1", headers=reader.headers)
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "private, no-cache"


async def test_show_renders_values_as_lists_do(reader):
    record = (await show(reader, "articles/3"))["data"]
    assert record["price"] == "5.50" and record["body"] == "back\\slash here"
    assert (await show(reader, "articles/2"))["data"]["title"] == "Новости компании"


async def test_fields_and_with_apply_to_show(reader):
    assert await show(reader, "articles/1?fields=title&with=author,comments") == {
        "data": {
            "id": 1,
            "title": "Hello world",
            "author": {"id": 1, "name": "Anna"},
            "comments": [{"id": 1, "body": "First!"}, {"id": 2, "body": "Nice"}],
        }
    }


async def test_a_record_without_related_rows_shows_null_and_an_empty_array(reader):
    assert await show(reader, "articles/4?fields=id&with=author,comments") == {
        "data": {"id": 4, "author": None, "comments": []}
    }


async def test_a_related_row_that_is_unpublished_is_not_shown(reader):
    await reader.database.execute(
        articles.insert().values(id=8, title="By a hidden author", author_id=3, published=True)
    )
    assert await show(reader, "articles/8?fields=id&with=author") == {"data": {"id": 8, "author": None}}


async def test_fields_and_relations_outside_the_whitelists_are_dropped(reader):
    record = (await show(reader, "articles/1?fields=title,secret&with=author.posts,nope"))["data"]
    assert record == {"id": 1, "title": "Hello world"}
    everything = (await show(reader, "articles/1?fields=secret"))["data"]
    assert "secret" not in everything and everything["body"] == "Body of Hello world"


async def test_list_parameters_do_not_change_which_record_show_answers(reader):
    list_only = "filter[id]=2&search=zzz&sort=-id&limit=0&offset=3&page=9"
    body = await show(reader, f"articles/1?{list_only}&fields=title")
    assert body == {"data": {"id": 1, "title": "Hello world"}}


async def test_an_unpublished_record_is_not_found(reader):
    body = await show(reader, "articles/5", status=404)
    assert body == {"error": "not_found", "message": body["message"]}
    assert (await show(reader, "authors/3", status=404))["error"] == "not_found"


@pytest.mark.parametrize(
    "record_id",
    [
        "999",
        "0",
        "-1",
        "abc",
        "1.5",
        "1e3",
        "99999999999999999999",
        "%20",
        "1%3B%20DROP%20TABLE%20demo_articles",
        "1%20OR%201%3D1",
    ],
)
async def test_an_unknown_or_malformed_id_is_not_found(reader, record_id):
    response = await reader.client.get(f"{API}/articles/{record_id}", headers=reader.headers)
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    assert response.headers["cache-control"] == "private, no-cache"


async def test_a_record_outside_the_declarations_query_is_not_found(reader, host_factory):
    registry = ApiRegistry()
    registry.register(
        "articles",
        {**DECLARATIONS["articles"], "query": lambda select: select.where(articles.c.category != "sales")},
    )
    host = await host_factory(reader.database, registry)
    host.headers = reader.headers
    assert (await show(host, "articles/3", status=404))["error"] == "not_found"
    assert (await show(host, "articles/2?fields=id"))["data"] == {"id": 2}


async def test_head_and_a_trailing_slash_address_the_same_record(reader):
    head = await reader.client.head(f"{API}/articles/1", headers=reader.headers)
    assert head.status_code == 200 and head.content == b""
    assert await show(reader, "articles/1/") == await show(reader, "articles/1")
