"""`unique` that holds under concurrency: writers of one object and field take turns.

A count followed by an insert is a race when two requests run it at once (under PostgreSQL's
READ COMMITTED both counts see nothing). So the check runs while holding a lock scoped to the
table and field: a transaction-scoped advisory lock on PostgreSQL, a named lock on MariaDB (taken
before the transaction begins, so its REPEATABLE READ snapshot is taken after the lock), and on
SQLite the write lock every write transaction already takes (`BEGIN IMMEDIATE`). A unique index
the table has catches writers that bypass the library; its refusal is mapped to the same 422.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Iterable
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.database.backends import backend_for
from pb_headless.errors import ServiceUnavailable, ValidationFailed
from pb_headless.registry import ObjectSpec

_LOCK_NAME_LENGTH = 64  # MariaDB's limit for a lock name


def fields_to_check(spec: ObjectSpec, values: dict[str, Any]) -> list[str]:
    return [name for name in spec.validator.unique_fields if values.get(name) is not None]


def _lock_name(spec: ObjectSpec, field: str) -> str:
    digest = hashlib.blake2b(f"{spec.table.name}.{field}".encode(), digest_size=16).hexdigest()
    return f"pb_unique_{digest}"[:_LOCK_NAME_LENGTH]


def _advisory_key(spec: ObjectSpec, field: str) -> int:
    digest = hashlib.blake2b(f"{spec.table.name}.{field}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextlib.asynccontextmanager
async def named_locks(
    database: Database, spec: ObjectSpec, fields: Iterable[str], timeout: float
) -> AsyncIterator[None]:
    """MariaDB: hold a named lock per field around the whole transaction (a no-op elsewhere)."""
    async with unique_locks(database, [(spec, field) for field in fields], timeout):
        yield


@contextlib.asynccontextmanager
async def unique_locks(
    database: Database, fields: Iterable[tuple[ObjectSpec, str]], timeout: float
) -> AsyncIterator[None]:
    """MariaDB: hold a named lock per object field around the whole transaction, for writes that
    touch several objects (a batch); a no-op elsewhere."""
    backend = backend_for(database)
    named = backend.unique_by_named_lock
    names = sorted({_lock_name(spec, field) for spec, field in fields}) if named else []
    taken: list[str] = []
    try:
        for name in names:  # sorted, so two writers never wait on each other in opposite orders
            if not await backend.take_named_lock(name, max(int(timeout), 1)):
                raise ServiceUnavailable("Another write holds this record's unique value; try again.")
            taken.append(name)
        yield
    finally:
        for name in reversed(taken):
            await backend.release_named_lock(name)


async def take_unique_turns(database: Database, fields: Iterable[tuple[ObjectSpec, str]]) -> None:
    """PostgreSQL, at the start of a transaction that checks several fields: take every field's
    advisory lock at once, in one order, so two such transactions never wait on each other in
    opposite orders (`check_unique` taking one again later costs nothing)."""
    backend = backend_for(database)
    if not backend.unique_by_transaction_lock:
        return
    for key in sorted({_advisory_key(spec, field) for spec, field in fields}):
        await backend.take_transaction_lock(key)


async def check_unique(database: Database, spec: ObjectSpec, values: dict[str, Any], exclude: Any) -> None:
    """Inside the write transaction: 422 for every unique field whose value another row holds."""
    taken: dict[str, list[str]] = {}
    backend = backend_for(database)
    for name in fields_to_check(spec, values):
        if backend.unique_by_transaction_lock:
            await backend.take_transaction_lock(_advisory_key(spec, name))
        query = sa.select(sa.func.count()).select_from(spec.table).where(spec.table.c[name] == values[name])
        if exclude is not None:
            query = query.where(spec.pk.column != exclude)
        if await database.fetch_val(query):
            taken[name] = [spec.validator.unique_message(name)]
    if taken:
        raise ValidationFailed(taken)
