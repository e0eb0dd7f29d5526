"""Every reach into private attributes of `databases`, aiosqlite, asyncpg, SQLAlchemy and Alembic: here only.

The speed work needs a few things these libraries do not offer publicly: the backend's dialect and
SQLite pool, the connection a task already holds, a connection's query lock, a compiled statement's
bind and result processors, a select's LIMIT and OFFSET parameters. Each is read here, by name, so a
dependency upgrade that moves one breaks one module, and `tests/unit/test_internals.py` names the
attribute that moved (`REACHED` lists them all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

T = TypeVar("T")

# Owner → the private attributes read or written here (the test checks each on the installed versions).
REACHED: dict[str, tuple[str, ...]] = {
    "databases.Database": ("_backend", "_global_connection", "_connection_map"),
    "databases.core.Connection": ("_connection", "_query_lock"),
    "databases.backends.sqlite.SQLiteBackend": ("_dialect", "_pool", "disconnect"),
    "databases.backends.sqlite.SQLitePool": ("_options", "_database", "_memref"),
    "databases.backends.sqlite.SQLiteConnection": ("_connection",),
    "aiosqlite.Connection": ("_thread", "_running", "_connection", "_execute"),
    "sqlalchemy.sql.Select": ("_limit_clause", "_offset_clause"),
    "sqlalchemy.sql.compiler.SQLCompiler": ("_bind_processors", "_result_columns"),
    "sqlalchemy.types.TypeEngine": ("_cached_result_processor",),
}
# Private attributes read outside this module, by module (none: every one is read here).
READ_OUTSIDE: dict[str, tuple[str, ...]] = {}
# Owner (a class or a module) → private attributes looked up on it rather than on a live instance:
# the driver's slots and methods, for drivers a test run may have no server for.
REACHED_ON_CLASS: dict[str, tuple[str, ...]] = {
    "asyncpg.connection.Connection": ("_protocol", "_loop", "_addr", "_params"),
    "asyncpg.pool.PoolConnectionProxy": ("_con",),
    "asyncpg.connect_utils": ("_cancel",),
    "alembic.script.ScriptDirectory": ("_stamp_revs", "_upgrade_revs"),
}


def backend(database: Any) -> Any:
    """The `databases` backend of a `Database` (None for anything else)."""
    return getattr(database, "_backend", None)


def backend_dialect(database: Any) -> Dialect | None:
    """The SQLAlchemy dialect `databases` compiles with (its parameter style included)."""
    return getattr(backend(database), "_dialect", None)


def pool_of(database: Any) -> Any:
    """The SQLite backend's pool (None on other backends, which have no `_pool` of this kind). Asked
    several times by every request (`accelerators.accelerator_of`): `backend` written out."""
    return getattr(getattr(database, "_backend", None), "_pool", None)


def swap_in(database: Any, pool: Any, before_disconnect: Callable[[], Awaitable[None]]) -> None:
    """Put `pool` in the SQLite backend's place, and run `before_disconnect` when the host disconnects."""
    found = backend(database)
    found._pool = pool
    disconnect = found.disconnect

    async def disconnect_and_close() -> None:
        await before_disconnect()
        await disconnect()

    found.disconnect = disconnect_and_close


def pool_options(pool: Any) -> dict[str, Any] | None:
    """The options the SQLite pool passes to `sqlite3.connect` (a factory, a timeout...)."""
    return getattr(pool, "_options", None)


def pool_state(pool: Any) -> dict[str, Any]:
    """Everything a SQLite pool holds, to build another pool on the same database."""
    return dict(vars(pool))


def pool_database(pool: Any) -> str:
    return str(pool._database)


def pool_is_in_memory_reference(pool: Any) -> bool:
    """Whether the pool keeps a shared in-memory database alive (`databases`' memory reference)."""
    return pool._memref is not None


def detach_thread(connection: Any) -> None:
    """Make an aiosqlite connection's thread a daemon, so a connection kept open does not keep the
    interpreter alive when the host never disconnects."""
    thread = getattr(connection, "_thread", None)
    if thread is not None:
        thread.daemon = True


def aiosqlite_is_open(connection: Any) -> bool:
    return bool(getattr(connection, "_running", True)) and getattr(connection, "_connection", 1) is not None


def held_by_task(database: Any) -> Any:
    """The `databases` connection this task already has, without making one (as `database.connection()`
    would); with `force_rollback`, the one connection every task shares."""
    if database._global_connection is not None:
        return database._global_connection
    held = database._connection_map  # a WeakKeyDictionary by task
    if not held.data:  # no task holds one (a read-only load): no task to look up
        return None
    task = asyncio.current_task()
    return None if task is None else held.get(task)


def in_transaction(connection: Any) -> bool:
    """Whether a `databases` SQLite connection holds an open transaction (None or not acquired: no)."""
    raw = getattr(getattr(connection, "_connection", None), "_connection", None)
    return raw is not None and bool(raw.in_transaction)


def driver(connection: Any) -> Any:
    """The driver's own connection under a `databases` connection (public: `raw_connection`)."""
    return connection.raw_connection


def sqlite_interrupt(raw: Any) -> Callable[[], None] | None:
    """`interrupt` of the sqlite3 connection under an aiosqlite one: SQLite lets any thread stop the
    statement running on it (None when it is not open)."""
    inner = getattr(raw, "_connection", None)
    return None if inner is None else inner.interrupt


async def run_on_sqlite_thread(raw: Any, function: Callable[..., T], *arguments: Any) -> T:
    """`function(sqlite3_connection, *arguments)` on the thread of an aiosqlite connection, as one
    trip: several statements that must follow each other without a hand-off in between."""
    return await raw._execute(function, raw._connection, *arguments)


def query_lock(connection: Any) -> Any:
    """The lock `databases` holds around each statement of one connection (None if it has none)."""
    return getattr(connection, "_query_lock", None)


def limit_and_offset(select: sa.Select[Any]) -> tuple[Any, Any]:
    """A select's LIMIT and OFFSET clauses as built (bound parameters, or None)."""
    return select._limit_clause, select._offset_clause


def bind_processors(compiled: Any) -> dict[str, Any]:
    """Bound parameter name → the dialect's conversion of a value before the driver gets it."""
    return dict(compiled._bind_processors)


def result_columns(compiled: Any) -> list[Any]:
    """The compiled statement's result columns, in order (each has `keyname` and `type`)."""
    return list(compiled._result_columns)


def result_processor(type_: Any, dialect: Dialect) -> Callable[[Any], Any] | None:
    """The dialect's conversion of a driver value of this type (cached by SQLAlchemy per dialect)."""
    return type_._cached_result_processor(dialect, None)


def hand_over_connection(database: Any, source: Any, target: Any) -> None:
    """Give the `databases` connection `source` (a task) has to `target`, which carries on its work
    (`UnitOfWork.run`, eager): its queries and its release find it there."""
    if database._global_connection is not None:
        return
    found = database._connection_map.pop(source, None)
    if found is not None:
        database._connection_map[target] = found


def alembic_stamp_revisions(scripts: Any, target: str, heads: Any) -> Any:
    """Alembic's steps that stamp `target` over `heads`, as its own `stamp` command asks for them."""
    return scripts._stamp_revs(target, heads)


def alembic_upgrade_revisions(scripts: Any, target: str, heads: Any) -> Any:
    """Alembic's steps from `heads` up to `target`, as its own `upgrade` command asks for them."""
    return scripts._upgrade_revs(target, heads)


def asyncpg_cancel_request(raw: Any) -> Any:
    """A coroutine asking PostgreSQL to stop the statement in flight on asyncpg connection `raw` (a
    cancel request on a socket of its own, as psql's Ctrl-C), or None when it has no protocol."""
    from asyncpg.pool import PoolConnectionProxy  # type: ignore[import-untyped]

    # The pool hands out a proxy of the connection. No default on either read: a moved attribute
    # raises (and tests/unit/test_internals.py names it) instead of switching the cancel off.
    connection = raw._con if isinstance(raw, PoolConnectionProxy) else raw
    if connection is None:  # a proxy the pool already took back: its connection is gone
        return None
    protocol = connection._protocol
    if protocol is None:  # closed
        return None
    from asyncpg import connect_utils  # type: ignore[import-untyped]  # only PostgreSQL hosts have it

    return connect_utils._cancel(
        loop=connection._loop,
        addr=connection._addr,
        params=connection._params,
        backend_pid=protocol.backend_pid,
        backend_secret=protocol.backend_secret,
    )
