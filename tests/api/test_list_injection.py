"""Field names and values carrying SQL, quotes, `%`, `_`, backslashes and unicode are harmless, on every
database.

Each test ends by counting the table's rows straight from the database: nothing was changed.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
import sqlalchemy as sa

from tests.support.demo import ARTICLES, articles

API = "/api/pb/v1/objects/articles"
TITLE = 'O\'Brien "quoted" ; -- /* % _ \\ ☕ 🎉'


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read"))
    await demo.database.execute(articles.insert().values(id=8, title=TITLE, body="tricky", published=True))
    yield demo
    count = sa.select(sa.func.count()).select_from(articles)
    assert await demo.database.fetch_val(count) == len(ARTICLES) + 1


async def listing(host, pairs: list[tuple[str, str]], status: int = 200) -> dict:
    response = await host.client.get(API, params=pairs, headers=host.headers)
    assert response.status_code == status, response.text
    return response.json()


def ids(body: dict) -> list[int]:
    return [record["id"] for record in body["data"]]


@pytest.mark.parametrize(
    "key",
    [
        "filter[title;drop table demo_articles]",
        "filter[title][eq;drop table demo_articles]",
        "filter[id) or (1=1]",
        "filter['title']",
        'filter["title"]',
        "filter[title`]",
        "filter[%]",
        "filter[_]",
        "filter[тайтл]",
        "filter[title\\]",
    ],
)
async def test_a_filter_key_carrying_sql_is_ignored_as_written(reader, key):
    body = await listing(reader, [(key, "x"), ("fields", "id"), ("limit", "6")])
    assert ids(body) == [1, 2, 3, 4, 6, 7]
    assert body["meta"]["ignored"] == [key]


@pytest.mark.parametrize(
    ("parameter", "item"),
    [
        ("sort", "title;drop table demo_articles"),
        ("sort", "-title desc, (select 1)"),
        ("sort", "title`"),
        ("fields", "title from demo_authors --"),
        ("fields", "*"),
        ("fields", "'title'"),
        ("with", "author;drop table demo_authors"),
        ("with", "author) union select * from demo_authors --"),
    ],
)
async def test_list_items_carrying_sql_are_ignored_as_written(reader, parameter, item):
    body = await listing(reader, [(parameter, item), ("limit", "6")])
    assert ids(body) == [1, 2, 3, 4, 6, 7]
    assert body["meta"]["ignored"] == [f"{parameter}={part.strip()}" for part in item.split(",")]


@pytest.mark.parametrize(
    "value",
    [
        "x' OR '1'='1",
        'x" OR "1"="1',
        "'; DROP TABLE demo_articles; --",
        "%",
        "_",
        "%%",
        "\\",
        "\\'",
        "' UNION SELECT secret FROM demo_articles --",
        "Hello world' --",
    ],
)
async def test_a_value_carrying_sql_or_wildcards_is_compared_as_plain_text(reader, value):
    assert ids(await listing(reader, [("filter[title]", value), ("fields", "id")])) == []
    assert ids(await listing(reader, [("filter[title][in]", value), ("fields", "id")])) == []
    assert ids(
        await listing(reader, [("filter[category][ne]", value), ("fields", "id"), ("limit", "6")])
    ) == [1, 2, 3, 4, 6, 7]


async def test_a_title_full_of_special_characters_is_found_by_equals_like_and_search(reader):
    assert ids(await listing(reader, [("filter[title]", TITLE), ("fields", "id")])) == [8]
    for word in ("'brien \"q", "; --", "/* %", "% _", "_ \\", "☕", "🎉", "o'BRIEN"):
        assert ids(await listing(reader, [("filter[title][like]", word), ("fields", "id")])) == [8], word
    for term in ("'brien", '"quoted"', "--", "/*", "☕", "🎉", "O'BRIEN", ";"):
        assert ids(await listing(reader, [("search", term), ("fields", "id")])) == [8], term


async def test_the_record_comes_back_exactly_as_stored(reader):
    body = await listing(reader, [("filter[id]", "8"), ("fields", "title")])
    assert body["data"] == [{"id": 8, "title": TITLE}]


async def test_a_number_carrying_sql_is_a_422_not_a_query(reader):
    pairs = [("filter[id]", "1 OR 1=1"), ("filter[price][in]", "1,2) OR (1=1")]
    body = await listing(reader, pairs, status=422)
    assert body["details"] == {
        "filter[id]": ["must be an integer"],
        "filter[price][in]": ["must be a number"],
    }


@pytest.mark.parametrize("key", ["filter[title]", "filter[title][like]", "search"])
async def test_a_nul_character_is_a_422_not_a_database_error(reader, key):
    body = await listing(reader, [(key, "a\x00b")], status=422)
    assert body["details"] == {key: ["must not contain NUL characters"]}


async def test_a_long_value_is_just_a_value_that_matches_nothing(reader):
    long_value = "é%_'" * 125  # 500 characters, the most a `like` or `search` value may have
    assert ids(await listing(reader, [("filter[title][like]", long_value), ("search", long_value)])) == []


async def test_a_value_longer_than_the_bound_is_refused_before_any_sql(reader):
    long_value = "é%_'" * 1000
    body = await listing(reader, [("filter[title][like]", long_value), ("search", long_value)], status=422)
    assert body["details"] == {
        "filter[title][like]": ["must be at most 500 characters"],
        "search": ["must be at most 500 characters"],
    }


async def test_sql_in_a_record_id_is_not_found(reader):
    for record_id in ("8 OR 1=1", "8;DROP TABLE demo_articles", "8'--"):
        response = await reader.client.get(f"{API}/{quote(record_id)}", headers=reader.headers)
        assert response.status_code == 404


async def test_raw_unencoded_query_strings_are_read_safely(reader):
    response = await reader.client.get(
        f"{API}?filter[title]=x'%20OR%20'1'='1&sort=title;--&fields=id", headers=reader.headers
    )
    assert response.status_code == 200
    assert response.json()["data"] == []
    assert response.json()["meta"]["ignored"] == ["sort=title;--"]
