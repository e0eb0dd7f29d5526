"""Counting the statements the API sends through a host's database (to show there is no N+1)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from databases import Database

from pb_headless.database import oneoff
from pb_headless.database.dialect import dialect_name


@contextlib.contextmanager
def counting(database: Database) -> Iterator[dict[str, int]]:
    """`with counting(database) as calls:` ... `calls["count"]` statements were sent."""
    calls = {"count": 0}
    originals = {name: getattr(database, name) for name in ("fetch_all", "fetch_one", "fetch_val")}

    def counted(original):
        async def call(*args, **kwargs):
            calls["count"] += 1
            return await original(*args, **kwargs)

        return call

    for name, original in originals.items():
        setattr(database, name, counted(original))
    # Statements a declaration's `query` narrows go through database/oneoff.py on SQLite.
    fetch_rows = oneoff.fetch_rows

    async def counted_rows(target, statement):
        if target is database and dialect_name(database) == "sqlite":  # elsewhere: `fetch_all`, counted
            calls["count"] += 1
        return await fetch_rows(target, statement)

    oneoff.fetch_rows = counted_rows
    try:
        yield calls
    finally:
        oneoff.fetch_rows = fetch_rows
        for name in originals:
            delattr(database, name)  # the instance attribute hid the method
