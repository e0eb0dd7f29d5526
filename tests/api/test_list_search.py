"""docs/query.md `search`, through HTTP on every database.

The demo's articles search `title` and `body`; `category` and `secret` are not searchable.
"""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry
from tests.support.demo import DECLARATIONS, articles, comments

API = "/api/pb/v1/objects"


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read,authors.read"))
    return demo


async def listing(host, query: str, name: str = "articles") -> dict:
    response = await host.client.get(f"{API}/{name}?{query}", headers=host.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def found(host, search: str, name: str = "articles") -> list[int]:
    body = await listing(host, f"search={search}&fields=id&limit=6", name)
    assert "ignored" not in body["meta"], body["meta"]
    return [record["id"] for record in body["data"]]


async def test_search_matches_any_searchable_field(reader):
    assert await found(reader, "quarterly") == [4]  # title
    assert await found(reader, "amet") == [6]  # body only
    assert await found(reader, "lorem") == [6]  # both


async def test_search_is_case_insensitive_for_every_alphabet(reader):
    assert await found(reader, "HELLO") == [1, 7]
    assert await found(reader, "большие") == [2]
    assert await found(reader, "НОВОСТИ") == [2]


async def test_every_term_must_appear_in_some_searchable_field(reader):
    assert await found(reader, "hello world") == [1]
    assert await found(reader, "hello+second") == [7]  # `+` is a space in a query string
    assert await found(reader, "dolor amet") == [6]  # one in the title, one in the body
    assert await found(reader, "hello amet") == []


async def test_search_terms_are_literal_words_not_patterns(reader):
    assert await found(reader, "%25") == [3]
    assert await found(reader, "50%25") == [3]
    assert await found(reader, "_") == [3]
    assert await found(reader, "f_t") == [3]
    assert await found(reader, "o_l") == []
    assert await found(reader, "\\") == [3]  # the body "back\slash here"
    assert await found(reader, "k\\s") == [3]


async def test_search_does_not_look_at_fields_that_are_not_searchable(reader):
    assert await found(reader, "sale") == [3]  # "Sale:" in the title
    assert await found(reader, "sales") == []  # only the category says "sales"
    assert await found(reader, "company") == []  # only the category says "company"
    assert await found(reader, "secret") == []


async def test_search_never_finds_an_unpublished_row(reader):
    assert await found(reader, "draft") == []
    assert await found(reader, "hidden", "authors") == []
    assert await found(reader, "ann", "authors") == [1]


async def test_search_combines_with_filters(reader):
    body = await listing(reader, "search=hello&filter[featured][null]=false&fields=id")
    assert [record["id"] for record in body["data"]] == [1]


@pytest.mark.parametrize("query", ["search=", "search=%20%20", "search=+"])
async def test_an_empty_search_is_ignored_and_not_named(reader, query):
    body = await listing(reader, f"{query}&fields=id&limit=6")
    assert [record["id"] for record in body["data"]] == [1, 2, 3, 4, 6, 7]
    assert "ignored" not in body["meta"]


async def test_search_on_an_object_without_searchable_fields_is_ignored_and_named(reader, host_factory):
    registry = ApiRegistry()
    registry.register("articles", DECLARATIONS["articles"])
    registry.register("notes", {"model": comments, "fields": ["body", "article_id"]})
    host = await host_factory(reader.database, registry)
    headers = host.auth(await host.token("notes.read", name="notes"))
    response = await host.client.get(f"{API}/notes?search=First", headers=headers)
    body = response.json()
    assert [record["id"] for record in body["data"]] == [1, 2, 4]
    assert body["meta"]["ignored"] == ["search=First"]


async def test_search_finds_quotes_and_sql_as_plain_text(reader):
    await reader.database.execute(
        articles.insert().values(
            id=8, title='O\'Brien says "hi"', body="x'; DROP TABLE demo_articles; --", published=True
        )
    )
    assert await found(reader, "o'brien") == [8]
    assert await found(reader, '"hi"') == [8]
    assert await found(reader, "DROP TABLE") == [8]
    assert await found(reader, "'") == [8]
