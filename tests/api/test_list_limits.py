"""The bounds on one list query (docs/query.md, "Limits"), through HTTP on every database.

Queries that used to reach a database's own limit — 997 search words or 998 filters (SQLite's
expression depth), a 50,000-character `like` value (SQLite's pattern length), 330 `in` lists
(PostgreSQL's 32,767 bound parameters) — and answered 500, or cost seconds, are refused with 422
before any SQL is built; a query right at each bound still answers.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from pb_headless import ApiRegistry
from tests.support.demo import DECLARATIONS, create_demo

API = "/api/pb/v1/objects/articles"
INVALID = "validation_failed"


@pytest.fixture
async def reader(database, host_factory):
    """The demo's articles, filterable on three fields: 34 filter parameters, so the bound is 50."""
    await create_demo(database)
    registry = ApiRegistry()
    registry.register("articles", {**DECLARATIONS["articles"], "filterable": ["id", "title", "views"]})
    host = await host_factory(database, registry)
    host.headers = host.auth(await host.token("articles.read"))
    return host


@pytest.fixture
async def demo_reader(demo):
    """The demo's articles as declared: ten filterable fields, 112 filter parameters."""
    demo.headers = demo.auth(await demo.token("articles.read"))
    return demo


async def listing(host, pairs: list[tuple[str, str]], status: int) -> dict:
    response = await host.client.get(
        API, params=[*pairs, ("fields", "id"), ("limit", "6")], headers=host.headers
    )
    assert response.status_code == status, response.text[:500]
    return response.json()


async def refused(host, pairs: list[tuple[str, str]]) -> dict:
    body = await listing(host, pairs, 422)
    assert body["error"] == INVALID
    return body["details"]


async def refused_long(host, pairs: list[tuple[str, str]]) -> dict:
    """Like `refused`, for a query string longer than httpx lets a client build: straight through ASGI."""
    messages: list[dict] = []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": API,
        "raw_path": API.encode(),
        "root_path": "",
        "query_string": urlencode(pairs).encode(),
        "headers": [
            (b"host", b"testserver"),
            *((key.lower().encode(), value.encode()) for key, value in host.headers.items()),
        ],
        "client": ("203.0.113.7", 50000),
        "server": ("testserver", 80),
    }

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        messages.append(message)

    await host.app(scope, receive, send)
    assert messages[0]["status"] == 422
    body = json.loads(b"".join(message.get("body", b"") for message in messages[1:]))
    assert body["error"] == INVALID
    return body["details"]


async def ids(host, pairs: list[tuple[str, str]]) -> list[int]:
    body = await listing(host, pairs, 200)
    assert "ignored" not in body["meta"], body["meta"]
    return [record["id"] for record in body["data"]]


def numbers(first: int, count: int) -> str:
    return ",".join(str(number) for number in range(first, first + count))


# Six different words that all appear in article 6, "Lorem ipsum dolor" / "lorem ipsum sit amet": the
# most a search of articles (searched in title and body: 12 words × fields) may have.
SIX_WORDS = "l lo lor lore lorem ipsum"


async def test_a_search_of_six_words_in_two_fields_answers_and_a_seventh_is_refused(reader):
    assert len(set(SIX_WORDS.split())) == 6
    assert await ids(reader, [("search", SIX_WORDS)]) == [6]
    assert await refused(reader, [("search", f"{SIX_WORDS} amet")]) == {
        "search": ["must have at most 6 different words"]
    }


async def test_997_search_words_are_refused_not_a_server_error(reader):
    details = await refused(reader, [("search", " ".join(f"w{number}" for number in range(997)))])
    assert details == {"search": ["must be at most 500 characters"]}
    details = await refused(
        reader, [("search", " ".join("ab"[number % 2] * (1 + number // 2) for number in range(30)))]
    )
    assert details == {"search": ["must have at most 6 different words"]}


async def test_a_search_value_of_500_characters_answers_and_501_is_refused(reader):
    assert await ids(reader, [("search", "lorem" + " " * 495)]) == [6]
    assert await refused(reader, [("search", "lorem" + " " * 496)]) == {
        "search": ["must be at most 500 characters"]
    }


async def test_a_like_value_of_500_characters_answers_and_50000_are_refused(reader):
    assert await ids(reader, [("filter[title][like]", "ё" * 500)]) == []
    assert await refused(reader, [("filter[title][like]", "ё" * 501)]) == {
        "filter[title][like]": ["must be at most 500 characters"]
    }
    assert await refused_long(reader, [("filter[title][like]", "%" * 50_000)]) == {
        "filter[title][like]": ["must be at most 500 characters"]
    }


async def test_fifty_filter_conditions_answer_and_fifty_one_are_refused(reader):
    fifty = [("filter[views][gte]", str(number)) for number in range(50)]
    assert await ids(reader, fifty) == [6, 7]
    assert await refused(reader, [*fifty, ("filter[title][ne]", "x")]) == {
        "filter": ["must have at most 50 conditions"]
    }


async def test_998_filters_are_refused_not_a_server_error(reader):
    details = await refused(reader, [("filter[views][gte]", str(number)) for number in range(998)])
    assert details == {"filter": ["must have at most 50 conditions"]}


async def test_an_object_offering_more_filter_parameters_than_fifty_takes_one_condition_per_parameter(
    demo_reader,
):
    conditions = [("filter[views][gte]", str(number)) for number in range(112)]
    assert await ids(demo_reader, conditions) == []
    details = await refused(demo_reader, [("filter[views][gte]", str(number)) for number in range(998)])
    assert details == {"filter": ["must have at most 112 conditions"]}
    assert await refused(demo_reader, [*conditions, ("filter[id][ne]", "1")]) == {
        "filter": ["must have at most 112 conditions"]
    }


async def test_an_in_list_of_100_values_answers_and_101_is_refused(reader):
    assert await ids(reader, [("filter[id][in]", numbers(1, 100))]) == [1, 2, 3, 4, 6, 7]
    repeated = [("filter[id][nin][]", str(number)) for number in range(1, 102)]
    assert await refused(reader, repeated) == {"filter[id][nin][]": ["must have at most 100 values"]}


async def test_2000_bound_values_answer_and_one_more_is_refused(reader):
    twenty_lists = [("filter[id][in]", numbers(1, 100))] * 20
    assert await ids(reader, twenty_lists) == [1, 2, 3, 4, 6, 7]
    assert await refused(reader, [*twenty_lists, ("search", "hello")]) == {
        "filter": ["must have at most 2000 values in all"]
    }


async def test_330_in_lists_are_refused_not_a_server_error(reader):
    lists = [("filter[id][in]", numbers(number * 100, 100)) for number in range(330)]
    assert await refused_long(reader, lists) == {"filter": ["must have at most 50 conditions"]}
    lists = [("filter[id][in]", numbers(number * 100, 100)) for number in range(50)]
    assert await refused_long(reader, lists) == {"filter": ["must have at most 2000 values in all"]}


async def test_every_bound_that_is_passed_is_named_at_once(reader):
    details = await refused(
        reader,
        [("search", "x" * 501), ("filter[title][like]", "y" * 501), ("filter[id][in]", numbers(0, 101))],
    )
    assert details == {
        "filter[title][like]": ["must be at most 500 characters"],
        "filter[id][in]": ["must have at most 100 values"],
        "search": ["must be at most 500 characters"],
    }
