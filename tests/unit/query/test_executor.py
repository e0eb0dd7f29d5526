"""The executor on a real `databases` SQLite connection: pages, totals, relations, and how many queries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from databases import Database

from pb_headless.database import statements
from pb_headless.database.backends import backend_for
from pb_headless.database.caches import Caches
from pb_headless.database.sqlite.serving import fit_for_serving
from pb_headless.errors import ValidationFailed
from pb_headless.query import fetch_one, parse_query, plan_list, plan_show
from pb_headless.query.executor import fetch_page
from pb_headless.query.prepared import Reader, compile_read
from pb_headless.registry.spec import ObjectSpec


class CountingDatabase:
    """The host's database, counting the statements the executor sends."""

    def __init__(self, database: Database) -> None:
        self.database, self.statements = database, 0

    async def fetch_all(self, statement: Any) -> Any:
        self.statements += 1
        return await self.database.fetch_all(statement)

    async def fetch_one(self, statement: Any) -> Any:
        self.statements += 1
        return await self.database.fetch_one(statement)

    async def fetch_val(self, statement: Any) -> Any:
        self.statements += 1
        return await self.database.fetch_val(statement)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.database, name)


@pytest.fixture
async def database(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[CountingDatabase]:
    database = Database(sqlite_url)
    fit_for_serving(database)
    await database.connect()
    counting = CountingDatabase(database)
    run = statements.run

    async def counted(*args: Any, **kwargs: Any) -> Any:
        # A statement compiled once runs here: on the loop's thread, or on the request's connection.
        counting.statements += 1
        return await run(*args, **kwargs)

    monkeypatch.setattr(statements, "run", counted)
    try:
        yield counting
    finally:
        await database.disconnect()


async def listed(
    database: CountingDatabase, spec: ObjectSpec, *pairs: tuple[str, str]
) -> tuple[list[dict[str, Any]], int]:
    """The page and its exact total, the plan compiled and run in one go (as a list request does)."""
    plan = plan_list(spec, parse_query(pairs))
    reader = Reader(database, backend_for(database), Caches())  # type: ignore[arg-type]
    page = await fetch_page(
        reader, compile_read(reader, spec, replace(plan, count="exact", cursor=None)), None
    )
    return page.records, page.total or 0


async def test_a_page_renders_its_records_and_the_total(
    database: CountingDatabase, article_spec: ObjectSpec
) -> None:
    records, total = await listed(database, article_spec, ("fields", "title,price,featured,created_at"))
    assert total == 4
    assert records == [
        {
            "id": 1,
            "title": "Новости недели",
            "price": "19.99",
            "featured": True,
            "created_at": "2024-05-01T12:00:00+00:00",
        },
        {
            "id": 2,
            "title": "100% pure_fun",
            "price": "5.00",
            "featured": False,
            "created_at": "2024-05-02T08:30:00+00:00",
        },
    ]
    assert database.statements == 2


async def test_a_short_last_page_gives_the_total_without_a_count(
    database: CountingDatabase, article_spec: ObjectSpec
) -> None:
    records, total = await listed(database, article_spec, ("offset", "3"), ("limit", "3"))
    assert ([record["id"] for record in records], total) == ([5], 4)
    assert database.statements == 1


async def test_an_empty_first_page_means_nothing_matches(
    database: CountingDatabase, article_spec: ObjectSpec
) -> None:
    assert await listed(database, article_spec, ("search", "absent")) == ([], 0)
    assert database.statements == 1


async def test_a_page_past_the_end_still_counts_the_matches(
    database: CountingDatabase, article_spec: ObjectSpec
) -> None:
    assert await listed(database, article_spec, ("offset", "10")) == ([], 4)


async def test_limit_zero_only_counts(database: CountingDatabase, article_spec: ObjectSpec) -> None:
    assert await listed(database, article_spec, ("limit", "0"), ("filter[views][gte]", "20")) == ([], 2)
    assert database.statements == 1


async def test_relations_load_in_one_query_each_for_the_whole_page(
    database: CountingDatabase, article_spec: ObjectSpec
) -> None:
    records, _ = await listed(
        database, article_spec, ("fields", "title"), ("with", "author,comments"), ("limit", "3")
    )
    assert records == [
        {
            "id": 1,
            "title": "Новости недели",
            "author": {"id": 1, "name": "Анна"},
            "comments": [{"id": 1, "body": "first"}, {"id": 2, "body": "second"}],
        },
        {"id": 2, "title": "100% pure_fun", "author": None, "comments": []},  # both unpublished
        {"id": 3, "title": "Plain title", "author": None, "comments": []},  # no author at all
    ]
    assert database.statements == 4  # page, count, author, comments


async def test_an_invalid_plan_is_refused_before_any_query(
    database: CountingDatabase, article_spec: ObjectSpec
) -> None:
    with pytest.raises(ValidationFailed) as raised:
        await listed(database, article_spec, ("filter[price][gte]", "cheap"))
    assert raised.value.body()["details"] == {"filter[price][gte]": ["must be a number"]}
    assert database.statements == 0


async def test_show_returns_a_published_record_with_its_relations(
    database: CountingDatabase, article_spec: ObjectSpec
) -> None:
    plan = plan_show(article_spec, parse_query([("fields", "title"), ("with", "comments")]))
    record = await fetch_one(database, article_spec, plan, "5", "sqlite")  # type: ignore[arg-type]
    assert record == ({"id": 5, "title": "1000 pure fun", "comments": [{"id": 4, "body": "only"}]}, {})


@pytest.mark.parametrize("record_id", ["4", "99", "abc", "1.0", "", "99999999999999999999999"])
async def test_show_finds_nothing_for_an_unpublished_unknown_or_impossible_id(
    database: CountingDatabase, article_spec: ObjectSpec, record_id: str
) -> None:
    plan = plan_show(article_spec, parse_query([]))
    assert await fetch_one(database, article_spec, plan, record_id, "sqlite") == (None, {})  # type: ignore[arg-type]
