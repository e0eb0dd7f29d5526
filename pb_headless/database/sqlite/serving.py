"""Making the host's database fit for serving: on SQLite, Unicode case folding and kept-open connections."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from databases import Database

from pb_headless.database import internals
from pb_headless.database.dialect import CASEFOLD_FUNCTION, dialect_name

log = logging.getLogger("pb_headless")

SQLITE_BUSY_TIMEOUT = 30.0


class _CasefoldingConnection(sqlite3.Connection):
    """A SQLite connection that knows Unicode case folding, which SQLite's own `lower()` lacks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.create_function(CASEFOLD_FUNCTION, 1, _casefold, deterministic=True)


def _casefold(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def fit_for_serving(database: Database) -> None:
    """Make the host's SQLite database fit for serving: Unicode case folding and kept-open connections.

    `databases` opens a new aiosqlite connection (and thread) per use and passes its options on to
    `sqlite3.connect`, so a connection factory reaches every connection the host's database opens;
    the pool is swapped for one that keeps released connections open for the next request.
    """
    if dialect_name(database) != "sqlite":
        return
    options = internals.pool_options(internals.pool_of(database))
    if options is None:
        log.warning("pb_headless: cannot install Unicode case folding on this SQLite backend")
        return
    options.setdefault("factory", _CasefoldingConnection)
    # Writers queue for the write lock rather than fail: SQLite's 5 s default is short under load.
    options.setdefault("timeout", SQLITE_BUSY_TIMEOUT)
    from pb_headless.database.sqlite.pool import keep_open  # aiosqlite is there: this is SQLite

    keep_open(database)
