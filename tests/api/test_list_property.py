"""Arbitrary query strings against the list endpoint (hypothesis), on every database.

Whatever the client sends: never a 5xx, never a row that is unpublished or outside the declaration's
`query`, never a field or related row that is not published, and an envelope that adds up.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pb_headless import ApiRegistry
from pb_headless.query import OPERATORS
from tests.support.demo import DECLARATIONS, articles, create_demo

API = "/api/pb/v1/objects/articles"
PUBLISHED_FIELDS = {
    "id",
    "title",
    "body",
    "category",
    "price",
    "rating",
    "views",
    "featured",
    "published_on",
    "created_at",
    "author_id",
}
RELATIONS = {"author", "comments"}
# 5 is unpublished and 3 is a sale, which the declaration's `query` below leaves out.
SERVED = {1, 2, 4, 6, 7, 8}
UNPUBLISHED_AUTHOR, UNPUBLISHED_COMMENT = 3, 3

NAMES = sorted(
    PUBLISHED_FIELDS | RELATIONS | {"secret", "published", "created_by", "nope", "", "ID", "author.posts"}
)
INTERESTING = [
    "",
    "0",
    "1",
    "-1",
    "5",
    "true",
    "false",
    "null",
    "TRUE",
    "2026-01-02",
    "2026-01-02T12:00:00+02:00",
    "2026-01-02T12:00:00Z",
    "9999-12-31T23:59:59-01:00",
    "0001-01-01",
    "10.00",
    "19.99",
    "1e308",
    "-1e309",
    "9" * 30,
    "2147483648",
    "9223372036854775808",
    ",",
    ",,",
    "1,2",
    "1,2,3",
    "%",
    "_",
    "\\",
    "'",
    '"',
    "новости",
    "НОВОСТИ",
    "🎉",
    "x' OR '1'='1",
    "title;drop table demo_articles",
    "-title,views",
    "author,comments",
    "\x00",
    "a\x00b",
    " ",
    "+",
]

names = st.one_of(st.sampled_from(NAMES), st.text(max_size=8))
operators = st.one_of(
    st.none(), st.sampled_from([*sorted(OPERATORS), "regex", "EQ", ""]), st.text(max_size=5)
)
filter_keys = st.builds(
    lambda name, operator, repeated: (
        f"filter[{name}]" + (f"[{operator}]" if operator is not None else "") + ("[]" if repeated else "")
    ),
    names,
    operators,
    st.booleans(),
)
keys = st.one_of(
    filter_keys,
    st.sampled_from(
        ["sort", "fields", "with", "limit", "offset", "page", "search", "filter", "filter[]", "utm_source"]
    ),
    st.text(max_size=12),
)
values = st.one_of(
    st.sampled_from(INTERESTING),
    st.text(max_size=20),
    st.lists(st.sampled_from([*NAMES, "-title", "-views", "-id"]), max_size=4).map(",".join),
    st.integers(min_value=-10, max_value=2**33).map(str),
)
queries = st.lists(st.tuples(keys, values), max_size=6)


# Not "." or "..": a client's URL library resolves those before the request is sent.
record_ids = st.one_of(
    st.sampled_from(["1", "3", "5", "8", "0", "-1"]),
    st.text(min_size=1).filter(lambda text: text.strip(".") != ""),
)


def printable(text: str) -> str:
    """A raw query string as a client could put it on the wire (control characters and `#` encoded)."""
    return "".join(quote(ch) if ord(ch) < 0x20 or ch in "\x7f#" else ch for ch in text)


@pytest.fixture
async def site(database, host_factory):
    await create_demo(database)
    await database.execute(
        articles.insert().values(
            id=8, title="By a hidden author", author_id=UNPUBLISHED_AUTHOR, category="news", published=True
        )
    )
    registry = ApiRegistry()
    registry.register(
        "articles",
        {**DECLARATIONS["articles"], "query": lambda select: select.where(articles.c.category != "sales")},
    )
    host = await host_factory(database, registry, rate_limit=1_000_000)
    host.headers = host.auth(await host.token("articles.read"))
    return host


def check(response) -> None:
    assert response.status_code in (200, 422), (response.status_code, response.text)
    body = response.json()
    if response.status_code == 422:
        assert body["error"] == "validation_failed" and body["details"]
        assert all(
            isinstance(key, str) and messages and all(isinstance(m, str) for m in messages)
            for key, messages in body["details"].items()
        )
        return
    assert set(body) == {"data", "meta", "links"}
    meta, records = body["meta"], body["data"]
    assert meta["count"] == len(records) <= meta["limit"] <= 6
    assert meta["total"] <= len(SERVED)
    assert meta["has_more"] == (meta["offset"] + meta["count"] < meta["total"])
    ignored = meta.get("ignored", ["present only when not empty"])
    assert ignored and all(isinstance(item, str) for item in ignored)
    for record in records:
        assert record["id"] in SERVED
        assert set(record) <= PUBLISHED_FIELDS | RELATIONS
        author = record.get("author")
        assert author is None or (set(author) == {"id", "name"} and author["id"] != UNPUBLISHED_AUTHOR)
        assert all(comment["id"] != UNPUBLISHED_COMMENT for comment in record.get("comments", []))
    assert body["links"]["self"].startswith(f"http://testserver{API}")


@settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pairs=queries)
async def test_any_query_pairs_answer_200_or_422_and_only_served_rows(site, pairs):
    check(await site.client.get(API, params=pairs, headers=site.headers))


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=st.text(max_size=60))
async def test_any_raw_query_string_answers_200_or_422_and_only_served_rows(site, raw):
    check(await site.client.get(f"{API}?{printable(raw)}", headers=site.headers))


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pairs=queries, record_id=record_ids)
async def test_show_with_any_query_answers_a_served_record_or_404(site, pairs, record_id):
    response = await site.client.get(f"{API}/{quote(record_id, safe='')}", params=pairs, headers=site.headers)
    assert response.status_code in (200, 404), (response.status_code, response.text)
    if response.status_code == 200:
        record = response.json()["data"]
        assert record["id"] in SERVED and set(record) <= PUBLISHED_FIELDS | RELATIONS
