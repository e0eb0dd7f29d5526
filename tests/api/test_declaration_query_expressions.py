"""A declaration's `query` may use any common SQLAlchemy expression, on every database (docs/declarations.md).

`startswith` and its kin put a literal `%` into the SQL; on SQLite that `%` once met the driver's
parameter style and made every request to the object a 500. Each expression narrows lists, totals
and single records alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry
from tests.support.demo import DECLARATIONS, articles

API = "/api/pb/v1/objects/articles"
published = [1, 2, 3, 4, 6, 7]  # article 5 is a draft

# Each narrowing and the published articles it keeps (tests/support/demo.py has the rows).
NARROWINGS: dict[str, tuple[Callable[[Any], Any], list[int]]] = {
    "startswith": (lambda s: s.where(articles.c.title.startswith("Hello")), [1]),
    "not startswith": (lambda s: s.where(~articles.c.title.startswith("Hello")), [2, 3, 4, 6, 7]),
    "endswith": (lambda s: s.where(articles.c.title.endswith("hello")), [7]),
    "contains": (lambda s: s.where(articles.c.title.contains("50%")), [3]),
    "like": (lambda s: s.where(articles.c.title.like("%ll%")), [1, 7]),
    "in_": (lambda s: s.where(articles.c.category.in_(["company", "sales"])), [2, 3, 4]),
    "between": (lambda s: s.where(articles.c.id.between(2, 4)), [2, 3, 4]),
    "literal % in text": (lambda s: s.where(sa.text("demo_articles.title LIKE '%50!%%' ESCAPE '!'")), [3]),
}


@pytest.fixture
async def narrowed(demo, host_factory):
    async def host(narrowing: Callable[[Any], Any]):
        registry = ApiRegistry()
        registry.register("articles", {**DECLARATIONS["articles"], "query": narrowing})
        site = await host_factory(demo.database, registry)
        site.headers = site.auth(await site.token("articles.read"))
        return site

    return host


@pytest.mark.parametrize("name", sorted(NARROWINGS))
async def test_a_query_expression_narrows_lists_and_records_on_every_database(narrowed, name):
    narrowing, kept = NARROWINGS[name]
    site = await narrowed(narrowing)
    listed = await site.client.get(f"{API}?sort=id&fields=id&limit=6", headers=site.headers)
    assert listed.status_code == 200, listed.text
    assert [record["id"] for record in listed.json()["data"]] == kept
    assert listed.json()["meta"]["total"] == len(kept)
    for article in published:
        shown = await site.client.get(f"{API}/{article}?fields=id", headers=site.headers)
        assert shown.status_code == (200 if article in kept else 404), (article, shown.text)


def _regexp_narrowing(select: Any) -> Any:
    return select.where(articles.c.title.regexp_match("^Hello"))


async def test_regexp_match_stops_the_start_on_sqlite_naming_the_object_and_serves_elsewhere(
    demo, host_factory
):
    from pb_headless.registry.declaration import DeclarationError

    registry = ApiRegistry()
    registry.register("articles", {**DECLARATIONS["articles"], "query": _regexp_narrowing})
    site = await host_factory(demo.database, registry)
    if demo.database.url.dialect == "sqlite":
        with pytest.raises(DeclarationError) as raised:
            await site.api.startup()
        message = str(raised.value)
        assert "object 'articles'" in message and "'query'" in message and "regexp_match" in message
        assert "\n" not in message
        return
    await site.api.startup()
    try:
        headers = site.auth(await site.token("articles.read"))
        listed = await site.client.get(f"{API}?fields=id", headers=headers)
        assert listed.status_code == 200 and [record["id"] for record in listed.json()["data"]] == [1]
    finally:
        await site.api.shutdown()
