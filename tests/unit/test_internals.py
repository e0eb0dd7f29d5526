"""Every private attribute of `databases`, aiosqlite and SQLAlchemy the library reaches for is still there.

They are read in one module, pb_headless/database/internals.py, which lists them in `REACHED`; an
upgrade that moves one fails here, naming it, instead of at the first request. scripts/test-lowest
runs tests/unit, so this holds for the lowest supported versions as well as the newest.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from databases import Database

from pb_headless.database import internals

PACKAGE = Path(internals.__file__).resolve().parents[1]
# Names the library's own classes also give their own state (a pool's `_database`, a task's
# `_running`): checked on the owners above, not looked for elsewhere.
OWN_NAMES = {"_running", "_thread", "_options", "_database", "_loop"}


def owner(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


async def instances(tmp_path: Path) -> dict[str, Any]:
    """One live object of each owner: attributes set in `__init__` are not on the class."""
    database = Database(f"sqlite:///{tmp_path / 'probe.db'}")
    await database.connect()
    connection = database.connection()
    await connection.__aenter__()
    statement = sa.select(sa.literal(1)).limit(1).offset(0)
    found = {
        "databases.Database": database,
        "databases.core.Connection": connection,
        "databases.backends.sqlite.SQLiteBackend": internals.backend(database),
        "databases.backends.sqlite.SQLitePool": internals.pool_of(database),
        "databases.backends.sqlite.SQLiteConnection": getattr(connection, "_connection", None),
        "aiosqlite.Connection": connection.raw_connection,
        "sqlalchemy.sql.Select": statement,
        "sqlalchemy.sql.compiler.SQLCompiler": statement.compile(),
        "sqlalchemy.types.TypeEngine": sa.Integer(),
    }
    await connection.__aexit__(None, None, None)
    await database.disconnect()
    return found


@pytest.mark.parametrize("path", sorted(internals.REACHED))
async def test_each_private_attribute_the_library_reaches_for_is_still_there(path: str, tmp_path: Path):
    live = (await instances(tmp_path))[path]
    assert isinstance(live, owner(path)), f"{path}: no longer the type the library expects"
    missing = [name for name in internals.REACHED[path] if not hasattr(live, name)]
    assert not missing, f"{path} has no longer: {', '.join(missing)} (pb_headless/database/internals.py)"


def test_no_module_but_internals_reaches_into_a_dependency():
    """The attributes of `REACHED` (and `_backend`, `_pool`, ...) are named in internals.py alone."""
    reached = [*internals.REACHED.values(), *internals.REACHED_ON_CLASS.values()]
    names = {name for attributes in reached for name in attributes if name.startswith("_")}
    names -= OWN_NAMES
    for path in PACKAGE.rglob("*.py"):
        if path.resolve() == Path(internals.__file__).resolve():
            continue
        found = {
            node.attr
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Attribute) and node.attr in names
        }
        found |= {
            node.args[1].value
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call)
            and getattr(node.func, "id", None) in ("getattr", "setattr", "hasattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in names
        }
        found -= set(internals.READ_OUTSIDE.get(path.relative_to(PACKAGE).as_posix(), ()))
        assert not found, f"{path.relative_to(PACKAGE)} reaches for {sorted(found)}"


def owner_or_module(path: str) -> Any:
    try:
        return importlib.import_module(path)
    except ImportError:
        return owner(path)


@pytest.mark.parametrize("path", sorted(internals.REACHED_ON_CLASS))
def test_each_private_attribute_of_a_driver_class_or_module_is_still_there(path: str):
    """asyncpg's cancel request and Alembic's revision steps: looked up on the class or module, so
    this holds without a PostgreSQL server; a moved name would silently switch the cancel off."""
    found = owner_or_module(path)
    missing = [name for name in internals.REACHED_ON_CLASS[path] if not hasattr(found, name)]
    assert not missing, f"{path} has no longer: {', '.join(missing)} (pb_headless/database/internals.py)"


async def test_a_postgresql_connection_the_pool_took_back_has_no_statement_to_stop():
    """A cut-off request's connection may already be back in asyncpg's pool when it is discarded:
    its proxy no longer has a connection, and there is nothing to cancel (no error to log)."""
    import asyncpg  # type: ignore[import-untyped]

    from tests.support.databases import SERVERS, unavailable

    try:
        pool = await asyncpg.create_pool(SERVERS["postgresql"], min_size=1, max_size=1)
    except Exception as error:
        unavailable("postgresql", error)
    try:
        proxy = await pool.acquire()
        request = internals.asyncpg_cancel_request(proxy)
        assert request is not None  # in use: a cancel is possible
        request.close()  # never sent
        await pool.release(proxy)
        assert internals.asyncpg_cancel_request(proxy) is None
    finally:
        await pool.close()
