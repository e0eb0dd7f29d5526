"""Which accelerator a database has (pb_headless/database/accelerators.py): generic code asks it, never
the dialect's name; PostgreSQL and MariaDB get one that serves deep pages from noted keys and otherwise
answers as the plain one: "the ordinary way"; PostgreSQL's adds its trigram indexes (whose query is the
ordinary one: no candidates table)."""

from __future__ import annotations

from pathlib import Path

import pytest
from databases import Database

from pb_headless.database.accelerator_interface import PLAIN
from pb_headless.database.accelerators import accelerator_of, reads_inline
from pb_headless.database.postgresql.accelerator import PostgreSQLAccelerator
from pb_headless.database.server_accelerator import ServerAccelerator
from pb_headless.database.sqlite.accelerator import SQLiteAccelerator
from pb_headless.database.sqlite.serving import fit_for_serving


@pytest.mark.parametrize("url", ["postgresql://u@localhost/db", "mysql://u@localhost/db"])
async def test_a_server_database_gets_deep_pages_and_otherwise_the_plain_answers(url: str):
    database = Database(url)
    accelerator = accelerator_of(database)
    assert (
        isinstance(accelerator, ServerAccelerator) and accelerator.deep_pages and not reads_inline(database)
    )
    assert accelerator_of(database) is accelerator  # one per database: its noted keys last
    assert accelerator_of(Database(url)) is not accelerator
    assert not PLAIN.deep_pages
    assert accelerator.data_version() is None
    assert accelerator.read_quick(database, "SELECT 1", ()) is None
    if url.startswith("mysql"):
        assert await accelerator.ensure_search_index(database, None, ("title",)) is None  # type: ignore[arg-type]


def test_postgresql_reads_the_ordinary_way_and_keeps_trigram_indexes():
    database = Database("postgresql://u@localhost/db")
    accelerator = accelerator_of(database)
    assert isinstance(accelerator, PostgreSQLAccelerator) and accelerator.deep_pages
    assert not reads_inline(database)
    assert accelerator.data_version() is None
    assert accelerator.read_quick(database, "SELECT 1", ()) is None


def test_a_prepared_sqlite_file_reads_on_the_loop_and_one_in_memory_does_not(tmp_path: Path):
    on_disk, in_memory = Database(f"sqlite:///{tmp_path / 'site.db'}"), Database("sqlite://")
    fit_for_serving(on_disk)
    fit_for_serving(in_memory)
    assert isinstance(accelerator_of(on_disk), SQLiteAccelerator) and reads_inline(on_disk)
    assert accelerator_of(on_disk) is accelerator_of(on_disk)  # the pool's own: its noted keys last
    assert isinstance(accelerator_of(in_memory), SQLiteAccelerator) and not reads_inline(in_memory)


def test_a_sqlite_database_the_library_did_not_prepare_still_has_its_search_index_part(tmp_path: Path):
    accelerator = accelerator_of(Database(f"sqlite:///{tmp_path / 'plain.db'}"))
    assert isinstance(accelerator, SQLiteAccelerator) and not accelerator.reads_inline
