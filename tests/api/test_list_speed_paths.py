"""What the speed work must not change, through HTTP on every database: statements compiled once
answer each request with its own values, totals stay exact after writes made through the API, deep
pages (read through a deferred join) hold the same rows a plain OFFSET gives, and publishing a
constructor table gives it the indexes its API tab implies."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pb_headless import install
from pb_headless.constructor import (
    ApiTab,
    ConstructorField,
    ConstructorTable,
)
from pb_headless.constructor.indexes import implied_indexes
from pb_headless.database import totals
from pb_headless.database.accelerators import reads_inline
from pb_headless.database.dialect import dialect_name
from pb_headless.query import compiler
from pb_headless.state import read_data_version
from pb_headless.tables import state
from tests.support.constructor import constructor_host

NOTES = ConstructorTable(
    "notes",
    "Notes",
    (
        ConstructorField("title", "string", searchable=True, length=100),
        ConstructorField("rank", "integer"),
        ConstructorField("rubric", "string", length=20),
    ),
)
TAB = ApiTab(
    enabled=True,
    fields=("title", "rank", "rubric"),
    operations=("list", "show", "create", "update", "delete"),
    writable=("title", "rank", "rubric", "published"),
    filterable=("rank", "rubric"),
    sortable=("rank", "rubric"),
)
ROWS = 1030  # past the offset from which pages are read through a deferred join
URL = "/api/pb/v1/objects/notes"


def note(number: int) -> dict[str, object]:
    return {
        "id": number,
        "title": f"Заметка {number}" if number % 3 else f"100% note_{number}",
        "rank": (number * 7919) % 500,
        "rubric": f"r{number % 4}",
    }


@pytest.fixture
async def site(database, host_factory):
    host = await constructor_host(database, host_factory, NOTES, TAB, [note(n) for n in range(1, ROWS + 1)])
    if dialect_name(database) == "postgresql":
        await database.execute(f"SELECT setval(pg_get_serial_sequence('notes', 'id'), {ROWS})")
    return host


@pytest.fixture
async def site_without_log(database, host_factory):
    """The same site, served with `change_log=False`: its totals are kept by the data version alone."""

    async def without_log(database, registry=None, **options):
        return await host_factory(database, registry, change_log=False, **options)

    return await constructor_host(database, without_log, NOTES, TAB, [note(n) for n in range(1, ROWS + 1)])


async def listed(site, query: str) -> dict:
    response = await site.client.get(f"{URL}?{query}", headers=site.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_each_request_binds_its_own_values_to_a_statement_compiled_once(site):
    rows = [note(n) for n in range(1, ROWS + 1)]
    for rubric in ("r1", "r2", "r3"):
        body = await listed(site, f"filter[rubric]={rubric}&limit=5")
        assert body["meta"]["total"] == sum(row["rubric"] == rubric for row in rows)
        assert {record["rubric"] for record in body["data"]} == {rubric}
    for words in ("заметка 10", "ЗАМЕТКА 2", "% note_9", "_", "%"):
        body = await listed(site, f"search={words}&limit=100")
        matching = [
            row
            for row in rows
            if all(word.casefold() in str(row["title"]).casefold() for word in words.split())
        ]
        assert body["meta"]["total"] == len(matching), words
        assert [record["id"] for record in body["data"]] == [row["id"] for row in matching][:100]
    for number in (5, 6):
        shown = await site.client.get(f"{URL}/{number}", headers=site.headers)
        assert shown.json()["data"]["rank"] == note(number)["rank"]


@pytest.mark.parametrize(
    "query, keep, key",
    [
        ("sort=-rank", lambda row: True, lambda row: (-row["rank"], row["id"])),
        (
            "filter[rank][gte]=1&sort=rubric",
            lambda row: row["rank"] >= 1,
            lambda row: (row["rubric"], row["id"]),
        ),
        ("", lambda row: True, lambda row: row["id"]),
    ],
)
async def test_a_deep_page_holds_the_rows_a_plain_offset_gives(site, query, keep, key):
    expected = sorted((row for row in map(note, range(1, ROWS + 1)) if keep(row)), key=key)
    # Pages of one shape one after another: each is read with its own offset and limit.
    for offset, limit in ((0, 5), (3, 20), (compiler.DEFERRED_OFFSET, 20), (compiler.DEFERRED_OFFSET + 7, 3)):
        body = await listed(site, f"{query}&offset={offset}&limit={limit}")
        wanted = [row["id"] for row in expected[offset : offset + limit]]
        assert [record["id"] for record in body["data"]] == wanted, (offset, limit)
        assert body["meta"]["total"] == len(expected)


async def test_totals_stay_exact_after_every_write_made_through_the_api(site):
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS  # a kept count, still exact
    created = await site.client.post(
        URL, json={"title": "new", "rank": 1, "rubric": "r9"}, headers=site.headers
    )
    assert created.status_code == 201, created.text
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS + 1
    assert (await listed(site, "filter[rubric]=r9&limit=5"))["meta"]["total"] == 1
    hidden = await site.client.patch(f"{URL}/1", json={"published": False}, headers=site.headers)
    assert hidden.status_code == 200, hidden.text
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS
    deleted = await site.client.delete(f"{URL}/2", headers=site.headers)
    assert deleted.status_code == 204
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS - 1
    assert (await listed(site, "filter[rubric]=r9&limit=5"))["meta"]["total"] == 1


async def _bypassing_insert(site) -> int:
    """Insert an `r1` note in plain SQL, after the totals were kept; how many `r1` notes there were."""
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS
    in_r1 = sum(1 for number in range(1, ROWS + 1) if note(number)["rubric"] == "r1")
    assert (await listed(site, "filter[rubric]=r1&limit=5"))["meta"]["total"] == in_r1
    await site.database.execute(
        sa.text(
            "INSERT INTO notes (id, title, `rank`, rubric, published) VALUES (5000, 'x', 1, 'r1', 1)"
            if dialect_name(site.database) == "mysql"
            else "INSERT INTO notes (id, title, rank, rubric, published) VALUES (5000, 'x', 1, 'r1', true)"
        )
    )
    return in_r1


async def test_a_write_that_bypasses_the_library_is_in_the_total_at_once_with_the_change_log(site):
    """The list's totals are kept under its table's change-log position, which the write moved."""
    in_r1 = await _bypassing_insert(site)
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS + 1
    assert (await listed(site, "filter[rubric]=r1&limit=5"))["meta"]["total"] == in_r1 + 1


async def test_a_write_that_bypasses_the_library_shows_in_the_total_once_the_bound_has_passed(
    site_without_log, monkeypatch
):
    """Without the change log: on SQLite at once (its own data version moves with any commit);
    elsewhere within the bound."""
    site = site_without_log
    in_r1 = await _bypassing_insert(site)
    if reads_inline(site.database):
        assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS + 1
        assert (await listed(site, "filter[rubric]=r1&limit=5"))["meta"]["total"] == in_r1 + 1
        return
    monkeypatch.setattr(totals, "STALE_AFTER", 0.0)  # the documented bound, shortened to "now"
    monkeypatch.setattr(totals, "RECOUNT_FACTOR", 0.0)
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS  # this request starts a recount
    await site.api.caches.totals.settled()
    assert (await listed(site, "limit=5"))["meta"]["total"] == ROWS + 1


async def test_install_gives_an_older_database_the_data_version_and_writes_move_it(site):
    await site.database.execute(state.delete().where(state.c.id == 2))
    assert await read_data_version(site.database) is None
    await install(site.database)
    before = await read_data_version(site.database)
    assert before is not None
    created = await site.client.post(
        URL, json={"title": "n", "rank": 2, "rubric": "r1"}, headers=site.headers
    )
    assert created.status_code == 201
    assert await read_data_version(site.database) == before + 1


async def test_publishing_a_table_creates_the_indexes_its_api_tab_implies(site):
    assert (await listed(site, "limit=1"))["meta"]["total"] == ROWS  # the registry has built
    dialect = dialect_name(site.database)
    wanted = {
        str(index.name)
        for index in implied_indexes(
            sa.Table(
                "notes",
                sa.MetaData(),
                *(sa.Column(name, sa.String(20)) for name in ("id", "title", "rank", "rubric", "published")),
            ),
            TAB,
            dialect,
        )
    }
    # published; (published, f) per field; (published, f, s) per pair; on MariaDB the same with s DESC
    assert len(wanted) == 1 + 2 + 2 + (2 + 2 if dialect == "mysql" else 0)
    if dialect == "sqlite":
        rows = await site.database.fetch_all("SELECT name FROM sqlite_master WHERE type = 'index'")
    elif dialect == "postgresql":
        rows = await site.database.fetch_all("SELECT indexname FROM pg_indexes WHERE tablename = 'notes'")
    else:
        rows = await site.database.fetch_all(
            "SELECT index_name FROM information_schema.statistics "
            "WHERE table_schema = DATABASE() AND table_name = 'notes'"
        )
    assert wanted <= {row[0] for row in rows}


@pytest.mark.parametrize(
    "words, expected",
    [
        ("STRASSE", ["Straße", "strasse"]),  # a row with ß is folded by the function, an ASCII one by SQLite
        ("\u212a", ["kiosk"]),  # the Kelvin sign folds to an ASCII k
        ("новости", ["Новости"]),
        ("NEWS", ["news"]),
    ],
)
async def test_on_sqlite_search_folds_ascii_and_other_rows_alike(
    sqlite_database, host_factory, words, expected
):
    titles = ["Straße", "strasse", "kiosk", "Новости", "news", "other"]
    rows = [{"title": title, "rank": 1} for title in titles]
    host = await constructor_host(sqlite_database, host_factory, NOTES, TAB, rows)
    body = await listed(host, f"search={words}")
    assert [record["title"] for record in body["data"]] == expected
    assert body["meta"]["total"] == len(expected)
