"""What one search may cost (docs/hardening.md, "Searches"), through HTTP on every database.

The attacker's probe of issue 34: searches whose words are each common but never all in one row
(`лиса наука город люди обзор через`), so the page tests every row; and a common word whose count
reads every match. Here at a few thousand rows, with the budgets made small to match: the page
stopped at its budget is a 422 keyed `search`, a count stopped at its budget or its row cap is an
estimate flagged `meta.total_estimated`, and no search answers 503.
"""

from __future__ import annotations

import random

import pytest
import sqlalchemy as sa
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of
from pb_headless.query import search_cost

API = "/api/pb/v1/objects/documents"
ROWS = 3000
WORDS = ("лиса", "наука", "город", "люди", "обзор", "через")
PROBE = " ".join(WORDS)
TAIL = "финиш"  # the last word of every body: a count of it folds and reads every body whole

documents_metadata = sa.MetaData()
documents = sa.Table(
    "test_search_documents",
    documents_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("published", sa.Boolean, nullable=False),
)


def _row(number: int, chooser: random.Random) -> dict:
    # Every row holds five of the six words and "lorem", never all six: each word is common, the six
    # together match nothing, so the page reads every row to find that out.
    left_out = WORDS[number % len(WORDS)]
    words = [word for word in WORDS if word != left_out]
    chooser.shuffle(words)
    filler = " ".join(chooser.choice(("текст", "слово", "ipsum", "dolor")) for _ in range(300))
    return {
        "id": number,
        "title": f"lorem {words[0]} {number}",
        "body": f"{' '.join(words[1:])} {filler} {TAIL}",
        "published": True,
    }


@pytest.fixture
async def site(database, host_factory):
    dialect = dialect_of(database)
    await database.execute(str(CreateTable(documents, if_not_exists=True).compile(dialect=dialect)))
    chooser = random.Random(34)
    rows = [_row(number, chooser) for number in range(1, ROWS + 1)]
    for start in range(0, ROWS, 250):
        await database.execute(documents.insert().values(rows[start : start + 250]))
    registry = ApiRegistry()
    registry.register(
        "documents", {"model": documents, "fields": ["title", "body"], "searchable": ["title", "body"]}
    )
    host = await host_factory(database, registry)
    host.headers = host.auth(await host.token("documents.read"))
    return host


async def test_a_search_that_tests_every_row_past_its_budget_is_a_422_not_a_503(site, monkeypatch):
    monkeypatch.setattr(search_cost, "PAGE_BUDGET", 0.001)
    answer = await site.client.get(f"{API}?search={PROBE}&fields=id", headers=site.headers)
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["error"] == "validation_failed" and list(body["details"]) == ["search"]
    # The connection the budget was set on serves the next request without it.
    monkeypatch.setattr(search_cost, "PAGE_BUDGET", 30.0)
    for _ in range(3):
        listed = await site.client.get(f"{API}?search=лиса&fields=id&limit=1", headers=site.headers)
        assert listed.status_code == 200, listed.text


async def test_a_count_stopped_at_its_budget_is_an_estimate_flagged_as_one(site, monkeypatch):
    monkeypatch.setattr(search_cost, "COUNT_BUDGET", 0.001)
    answer = await site.client.get(f"{API}?search={TAIL}&fields=id&limit=5", headers=site.headers)
    assert answer.status_code == 200, answer.text
    meta = answer.json()["meta"]
    assert meta["total_estimated"] is True
    assert meta["total"] >= 5 and meta["has_more"] is True
    assert len(answer.json()["data"]) == 5


async def test_a_count_past_the_exact_cap_is_an_estimate_and_below_it_exact(site, monkeypatch):
    monkeypatch.setattr(search_cost, "SEARCH_COUNT_EXACT", 100)
    from pb_headless.query import compiler

    monkeypatch.setattr(compiler, "SEARCH_COUNT_EXACT", 100)
    common = (await site.client.get(f"{API}?search=lorem&fields=id&limit=5", headers=site.headers)).json()
    assert common["meta"]["total_estimated"] is True and common["meta"]["total"] > 100
    # Fewer matches than the cap: counted exactly, no flag.
    rare = (await site.client.get(f"{API}?search=lorem 1234&fields=id", headers=site.headers)).json()
    assert rare["meta"]["total"] == 1 and "total_estimated" not in rare["meta"]
    few = (await site.client.get(f"{API}?search=lorem 123&fields=id&limit=2", headers=site.headers)).json()
    expected = sum("123" in str(number) for number in range(1, ROWS + 1))
    assert few["meta"]["total"] == expected and "total_estimated" not in few["meta"]


async def test_a_token_has_at_most_its_share_of_running_searches(site):
    searches = site.api.caches.searches
    token = (await site.tokens.list())[0].token_hash
    other = site.auth(await site.token("documents.read", name="other"))
    with searches.share(token), searches.share(token):
        refused = await site.client.get(f"{API}?search=lorem&fields=id", headers=site.headers)
        assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
        assert refused.headers["retry-after"] == "1"
        # Its lists without a search, and another token's searches, go on.
        assert (await site.client.get(f"{API}?fields=id", headers=site.headers)).status_code == 200
        assert (await site.client.get(f"{API}?search=lorem&fields=id", headers=other)).status_code == 200
    assert (await site.client.get(f"{API}?search=lorem&fields=id", headers=site.headers)).status_code == 200
    assert len(searches) == 0


async def test_mariadb_sessions_get_back_the_default_statement_time_after_a_search(site):
    if site.database.url.dialect != "mysql":
        pytest.skip("max_statement_time is MariaDB's")
    for _ in range(3):
        answer = await site.client.get(f"{API}?search=lorem&fields=id&limit=1", headers=site.headers)
        assert answer.status_code == 200
    async with site.database.connection() as connection:
        raw = connection.raw_connection
        async with raw.cursor() as cursor:
            await cursor.execute("SELECT @@SESSION.max_statement_time = @@GLOBAL.max_statement_time")
            assert (await cursor.fetchone())[0] == 1


async def test_a_count_past_its_budget_is_not_tried_again_until_the_data_moves(site, monkeypatch):
    # Under load every request for a common word would otherwise spend the whole budget again on a
    # count that cannot finish (the million-row run on MariaDB, docs/performance-notes.md).
    address = f"{API}?search={TAIL}&fields=id&limit=5"
    monkeypatch.setattr(search_cost, "COUNT_BUDGET", 0.001)
    first = await site.client.get(address, headers=site.headers)
    assert first.status_code == 200 and first.json()["meta"]["total_estimated"] is True
    monkeypatch.setattr(search_cost, "COUNT_BUDGET", 30.0)
    again = await site.client.get(address, headers=site.headers)
    assert again.status_code == 200 and again.json()["meta"]["total_estimated"] is True
    # A write to the table (here the host's own SQL, which the change log sees) moves the count's
    # version: the next request counts again, within its budget now, exactly.
    await site.database.execute(documents.update().where(documents.c.id == 1).values(title="lorem moved"))
    moved = (await site.client.get(address, headers=site.headers)).json()["meta"]
    assert moved["total"] == ROWS and "total_estimated" not in moved
