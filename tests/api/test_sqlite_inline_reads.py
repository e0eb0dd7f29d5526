"""SQLite's short reads run on the event loop's thread (pb_headless/database/sqlite/inline.py,
docs/performance.md); whatever happens there, a client gets the same answers as on the request's own
connection: a read past its time budget, a database locked by a writer, and reads inside a write
all answer right."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.sqlite import inline as sqlite_inline
from tests.support.constructor import SEARCHABLE_NOTES, SEARCHABLE_NOTES_TAB, constructor_host

NOTES, TAB = SEARCHABLE_NOTES, SEARCHABLE_NOTES_TAB
ROWS = 3000
URL = "/api/pb/v1/objects/notes"


@pytest.fixture(params=["delete", "wal"])
async def site(request, sqlite_database, host_factory):
    """Each test runs with a rollback journal and in WAL mode (docs/deployment.md recommends WAL; the
    reads on the loop behave alike in both, docs/performance.md, "One snapshot per request in WAL mode")."""
    rows = [
        {"title": f"note {n}" + (" needle" if n % 1000 == 0 else ""), "rank": n} for n in range(1, ROWS + 1)
    ]
    set_journal_mode(sqlite_database.url.database, request.param)
    return await constructor_host(sqlite_database, host_factory, NOTES, TAB, rows)


def set_journal_mode(path: str, mode: str) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        assert connection.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0] == mode
    finally:
        connection.close()


def journal_mode(path: str) -> str:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        return str(connection.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    finally:
        connection.close()


def inline_of(database) -> sqlite_inline.InlineReads:
    inline = accelerator_of(database).inline
    assert isinstance(inline, sqlite_inline.InlineReads)
    return inline


async def test_a_record_and_a_page_are_read_on_the_loop_thread(site):
    response = await site.client.get(f"{URL}/7", headers=site.headers)
    assert response.status_code == 200
    assert response.json()["data"] == {"id": 7, "title": "note 7", "rank": 7}
    inline = inline_of(site.database)
    assert inline.is_open  # opened by the requests' reads
    assert not inline._over


async def test_a_read_past_its_budget_is_run_on_the_connection_with_the_same_answer(site, monkeypatch):
    monkeypatch.setattr(sqlite_inline, "INLINE_BUDGET", 0.0)
    monkeypatch.setattr(sqlite_inline, "CHECK_EVERY", 1)
    response = await site.client.get(f"{URL}?search=NEEDLE&sort=rank", headers=site.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [record["rank"] for record in body["data"]] == [1000, 2000, 3000]
    assert body["meta"]["total"] == 3
    assert inline_of(site.database)._over  # interrupted, remembered, answered by the thread


async def test_a_database_locked_by_a_writer_is_waited_for_not_refused(site):
    path = site.database.url.database
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")  # no reader may start until it commits
    try:
        request = asyncio.ensure_future(site.client.get(f"{URL}?filter[rank]=3001", headers=site.headers))
        await asyncio.sleep(0.3)
        assert not request.done()  # waiting for the lock, on the request's connection
        writer.execute("INSERT INTO notes (title, rank, published) VALUES ('late', 3001, 1)")
        writer.execute("COMMIT")
        response = await asyncio.wait_for(request, 10)
    finally:
        writer.close()
    assert response.status_code == 200, response.text
    assert [record["title"] for record in response.json()["data"]] == ["late"]


async def test_a_write_answers_with_what_it_wrote(site):
    created = await site.client.post(URL, headers=site.headers, json={"title": "fresh", "rank": 0})
    assert created.status_code == 201, created.text
    record_id = created.json()["data"]["id"]
    updated = await site.client.patch(f"{URL}/{record_id}", headers=site.headers, json={"rank": 5})
    assert updated.json()["data"] == {"id": record_id, "title": "fresh", "rank": 5}
    listed = await site.client.get(f"{URL}?filter[rank]=5", headers=site.headers)
    assert [record["title"] for record in listed.json()["data"]] == ["note 5", "fresh"]
    assert listed.json()["meta"]["total"] == 2


async def test_the_token_look_up_is_kept_while_nothing_is_written_and_another_programs_write_ends_it(site):
    """The token's row is read again only when SQLite's data version moved (docs/performance.md):
    a token disabled by another program, with no API call, is refused at the next request."""
    for _ in range(2):
        assert (await site.client.get(f"{URL}/7", headers=site.headers)).status_code == 200
    assert site.api.caches.sizes()["steady"] >= 1  # kept with the version it was read at
    other = sqlite3.connect(site.database.url.database, isolation_level=None)
    try:
        other.execute("UPDATE pb_api_tokens SET enabled = 0")
    finally:
        other.close()
    response = await site.client.get(f"{URL}/7", headers=site.headers)
    assert response.status_code == 401, response.text


async def test_a_list_reads_its_positions_and_page_in_one_read_transaction_and_ends_it(site):
    """docs/performance.md, "A page's own cost": the change-log positions and the page are read under
    one shared lock; nothing stays open once the answer is made (in WAL mode, once the loop's step is
    over), so another program writes at once."""
    inline = inline_of(site.database)
    begun = []
    response = await site.client.get(f"{URL}?limit=5", headers=site.headers)
    assert response.status_code == 200, response.text
    await asyncio.sleep(0)
    assert inline._reader is not None and not inline._reader.in_transaction
    inline._reader.set_trace_callback(begun.append)
    try:
        again = await site.client.get(f"{URL}?limit=5", headers=site.headers)
        await asyncio.sleep(0)
    finally:
        inline._reader.set_trace_callback(None)
    assert again.json() == response.json()
    assert begun.count("BEGIN") == 1 and begun[-1] == "COMMIT"
    assert not inline._reader.in_transaction
    other = sqlite3.connect(site.database.url.database, isolation_level=None, timeout=0)
    try:
        other.execute("UPDATE notes SET rank = rank WHERE id = 1")  # not locked out
    finally:
        other.close()


async def test_shared_reads_see_one_committed_state_and_end_with_the_loops_step(site):
    inline = inline_of(site.database)
    inline.share()
    assert inline.fetchall("SELECT count(*) FROM notes", ()) == [(ROWS,)]
    assert inline._reader.in_transaction
    wal = journal_mode(site.database.url.database) == "wal"
    version = inline.data_version()
    other = sqlite3.connect(site.database.url.database, isolation_level=None, timeout=0)
    try:
        if wal:  # a writer is not kept waiting; the shared reads still see the state they began with
            other.execute("INSERT INTO notes (title, rank, published) VALUES ('late', 0, 1)")
            assert inline.fetchall("SELECT count(*) FROM notes", ()) == [(ROWS,)]
        else:
            with pytest.raises(sqlite3.OperationalError):  # no commit lands while the reads share a state
                other.execute("INSERT INTO notes (title, rank, published) VALUES ('late', 0, 1)")
        assert inline.data_version() == version
        await asyncio.sleep(0)  # the step ends: so do the shared reads, without `unshare`
        assert not inline._reader.in_transaction
        if not wal:
            other.execute("INSERT INTO notes (title, rank, published) VALUES ('late', 0, 1)")
    finally:
        other.close()
    assert inline.fetchall("SELECT count(*) FROM notes", ()) == [(ROWS + 1,)]
    assert inline.data_version() != version


async def test_a_request_joins_no_read_transaction_begun_before_it(site):
    """An in-process caller may write with a connection of its own and ask the API at once, in the
    same step of the loop: the answer is of the state after that write, in either journal mode."""
    assert (await site.client.get(f"{URL}/7", headers=site.headers)).status_code == 200
    inline = inline_of(site.database)
    assert inline.fetchall("SELECT count(*) FROM notes", ()) == [(ROWS,)]  # a read of this step
    other = sqlite3.connect(site.database.url.database, isolation_level=None, timeout=0)
    try:
        other.execute("UPDATE notes SET title = 'changed' WHERE id = 7")
    finally:
        other.close()
    response = await site.client.get(f"{URL}/7", headers=site.headers)
    assert response.json()["data"]["title"] == "changed"
