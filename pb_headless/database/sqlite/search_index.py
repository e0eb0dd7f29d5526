"""The search index of a published constructor table on SQLite: an FTS5 trigram table kept by triggers.

`search` on SQLite otherwise tests every row: the page reads rows until it has its records, and a
count reads the whole table. The index finds the candidate rows (database/sqlite/trigrams.py says
why candidates, and which), and the exact test runs on those alone.

What is made, all named after the table and a digest of the indexed columns and folding:

- `pbfts_<table>_<digest>`: a contentless FTS5 table (`tokenize='trigram'`, `detail='none'`), one
  column per searchable field and one for the marker. It holds no copy of the text, only which
  trigrams each row has (its size: docs/performance.md, "The search index on SQLite").
- Three triggers on the table (`…_ai`, `…_ad`, `…_au`) that keep it in step with every insert,
  delete and update of an indexed column, whoever writes: the API, the admin area, the host's own SQL
  or another program (its SQLite needs FTS5, which every common build has).

The index is made when the table is published and again whenever one of its parts is missing (a
table that was dropped and created again loses its triggers), in one transaction. Searchable fields
that are not text leave the table without an index (search stays exact, only slower), as does a
SQLite without FTS5.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time

import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import dialect_name
from pb_headless.database.sqlite.trigrams import MARKER, exotic_glob

log = logging.getLogger("pb_headless")

PREFIX = "pbfts_"
ATTEMPTS = 3  # each waits up to the busy timeout for another instance's build
_TRIGGERS = ("ai", "ad", "au")
_SUFFIXES = tuple(f"_{suffix}" for suffix in _TRIGGERS)
_OPTIONS = "content='', tokenize='trigram', detail='none'"  # no copy of the text, no positions


def index_name(table: str, columns: tuple[str, ...]) -> str:
    digest = hashlib.sha1(",".join((*columns, exotic_glob())).encode()).hexdigest()[:10]
    return f"{PREFIX}{table[:40]}_{digest}"


def indexable(definition: sa.Table, searchable: tuple[str, ...]) -> tuple[str, ...] | None:
    """The columns to index, or None when some searchable field is not text."""
    columns = tuple(name for name in searchable if name in definition.c)
    if not columns or any(not isinstance(definition.c[name].type, sa.String) for name in columns):
        return None
    return columns


async def ensure_search_index(
    database: Database, definition: sa.Table, searchable: tuple[str, ...]
) -> str | None:
    """The name of the table's search index, made or remade when it is incomplete; None: no index."""
    if dialect_name(database) != "sqlite":
        return None
    columns = indexable(definition, searchable)
    table = definition.name
    if columns is None:
        await drop_search_index(database, table)
        return None
    name = index_name(table, columns)
    wanted = {name, *(f"{name}_{suffix}" for suffix in _TRIGGERS)}
    failure: Exception | None = None
    for _ in range(ATTEMPTS):  # another instance may be making it: its lock is waited for, then looked at
        present = await _parts(database, table)
        if set(present) == wanted:
            return name
        started = time.monotonic()
        try:
            async with database.transaction():
                await _drop(database, present)
                for statement in _creation(table, _key_of(definition), name, columns):
                    await database.execute(statement)
        except Exception as error:
            failure = error
            continue
        took = time.monotonic() - started
        log.info("pb_headless: constructor table '%s': search index %s made in %.1f s", table, name, took)
        return name
    log.warning(
        "pb_headless: constructor table '%s': no search index (%s); search reads the table", table, failure
    )
    return None


async def drop_search_index(database: Database, table: str) -> None:
    """Drop the table's search index (before a column it holds is dropped, or with the table); the next
    publication makes it again."""
    if dialect_name(database) != "sqlite":
        return
    present = await _parts(database, table)
    if present:
        async with database.transaction():
            await _drop(database, present)


async def _parts(database: Database, table: str) -> dict[str, str]:
    """This table's search index parts, name → kind: its FTS5 tables and their triggers."""
    rows = await database.fetch_all(
        "SELECT name, type, tbl_name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = :table "
        "OR type = 'table' AND sql GLOB 'CREATE VIRTUAL TABLE*'",
        {"table": table},
    )
    own = re.compile(re.escape(f"{PREFIX}{table[:40]}_") + r"[0-9a-f]{10}")
    return {
        str(row[0]): str(row[1]).upper()
        for row in rows
        if (own.fullmatch(str(row[0])) and row[1] == "table")
        or (row[1] == "trigger" and own.fullmatch(str(row[0])[:-3]) and str(row[0])[-3:] in _SUFFIXES)
    }


async def _drop(database: Database, parts: dict[str, str]) -> None:
    for name, kind in sorted(parts.items(), key=lambda part: part[1] != "TRIGGER"):  # triggers first
        await database.execute(f'DROP {kind} IF EXISTS "{name}"')


def _key_of(definition: sa.Table) -> str:
    """The table's integer key, which is the index's rowid (a constructor table's `id`)."""
    return str(next(iter(definition.primary_key.columns)).name)


def _creation(table: str, primary_key: str, name: str, columns: tuple[str, ...]) -> list[str]:
    slots = ", ".join(f"c{index}" for index in range(len(columns)))
    fts_columns = f"rowid, {slots}, mark"
    key = f'"{primary_key}"'

    def values(row: str) -> str:
        fields = ", ".join(f'{row}"{column}"' for column in columns)
        return f"{row}{key}, {fields}, {_mark(row, columns)}"

    watched = ", ".join(f'"{column}"' for column in (primary_key, *columns))
    delete = f'INSERT INTO "{name}"("{name}", {fts_columns}) VALUES (\'delete\', {values("old.")});'
    insert = f'INSERT INTO "{name}"({fts_columns}) VALUES ({values("new.")});'
    return [
        f'CREATE VIRTUAL TABLE "{name}" USING fts5({slots}, mark, {_OPTIONS})',
        f'INSERT INTO "{name}"({fts_columns}) SELECT {values("")} FROM "{table}"',
        f'CREATE TRIGGER "{name}_ai" AFTER INSERT ON "{table}" BEGIN {insert} END',
        f'CREATE TRIGGER "{name}_ad" AFTER DELETE ON "{table}" BEGIN {delete} END',
        f'CREATE TRIGGER "{name}_au" AFTER UPDATE OF {watched} ON "{table}" BEGIN {delete} {insert} END',
    ]


def _mark(row: str, columns: tuple[str, ...]) -> str:
    """The marker when some indexed field holds an exotic character (tested only past ASCII)."""
    exotic = _literal(exotic_glob())
    beyond_ascii = "'*[^' || char(1) || '-' || char(127) || ']*'"
    tests = " OR ".join(
        f'({row}"{column}" GLOB {beyond_ascii} AND {row}"{column}" GLOB {exotic})' for column in columns
    )
    return f"CASE WHEN {tests} THEN {_literal(MARKER)} END"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
