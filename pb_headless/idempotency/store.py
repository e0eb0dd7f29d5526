"""The kept answers in `pb_idempotency`: claiming a key, keeping the answer, releasing, pruning.

The claim is the insert of a row whose primary key is (token, key): of any number of requests on any
number of instances, the database lets exactly one insert it. The token is named by the hash of its
value (`TokenInfo.token_hash`): a row id can be reused by a later token, a hash cannot. The row has no
answer (`status` NULL) while that request runs; it gets one when the request ends below 500 (a
create's in the transaction of its write), and is deleted otherwise, so that the client's retry can
run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from databases import Database

from pb_headless.database.database_errors import is_duplicate_key
from pb_headless.tables import idempotency

KEPT_FOR = timedelta(hours=24)  # how long an answer is replayed
# A claim whose request never ended (its server stopped mid-request) is given up after this long.
RUNNING_FOR = timedelta(minutes=5)
PRUNED_PER_WRITE = 100  # expired rows removed by each kept answer: bounded work per request

_table = idempotency
_c = idempotency.c


@dataclass(frozen=True, slots=True)
class Kept:
    """The row another request holds for this token and key."""

    request_hash: str
    status: int | None  # None: that request is still running
    answer: str | None  # JSON: {"body": text, "headers": {...}}
    expires_at: datetime


def now() -> datetime:
    """The library stores naive UTC datetimes."""
    return datetime.now(UTC).replace(tzinfo=None)


async def claim(database: Database, owner: str, key: str, request_hash: str) -> Kept | None:
    """None when this request now holds the key; else what the earlier request left (or holds)."""
    for _ in range(3):
        moment = now()
        try:
            await database.execute(
                _table.insert().values(
                    token_hash=owner,
                    idempotency_key=key,
                    request_hash=request_hash,
                    created_at=moment,
                    expires_at=moment + RUNNING_FOR,
                )
            )
            return None
        except Exception as error:
            if not is_duplicate_key(error):
                raise
        found = await _read(database, owner, key)
        if found is None:
            continue  # released or pruned in between: claim again
        if found.expires_at > moment:
            return found
        await database.execute(_table.delete().where(*_this(owner, key), _c.expires_at <= moment))
    return Kept(request_hash, None, None, now())  # lost three races in a row: say "running"


async def keep(database: Database, owner: str, key: str, status: int, answer: str) -> None:
    """The request's answer, replayed to repeats for `KEPT_FOR` (one row written: it may run inside
    the request's write transaction; pruning runs apart)."""
    await database.execute(
        _table.update()
        .where(*_this(owner, key))
        .values(status=status, answer=answer, expires_at=now() + KEPT_FOR)
    )


async def release(database: Database, owner: str, key: str) -> None:
    """Give the key up after a 5xx or a failure: the client's retry runs afresh."""
    await database.execute(_table.delete().where(*_this(owner, key), _c.status.is_(None)))


async def prune(database: Database, moment: datetime) -> int:
    """Remove up to `PRUNED_PER_WRITE` expired rows (oldest first); how many went."""
    expired = await database.fetch_all(
        sa.select(_c.token_hash, _c.idempotency_key)
        .where(_c.expires_at <= moment)
        .order_by(_c.expires_at)
        .limit(PRUNED_PER_WRITE)
    )
    if expired:
        keys = [(row[0], row[1]) for row in expired]
        await database.execute(
            _table.delete().where(
                sa.tuple_(_c.token_hash, _c.idempotency_key).in_(keys), _c.expires_at <= moment
            )
        )
    return len(expired)


async def _read(database: Database, owner: str, key: str) -> Kept | None:
    row = await database.fetch_one(
        sa.select(_c.request_hash, _c.status, _c.answer, _c.expires_at).where(*_this(owner, key))
    )
    return None if row is None else Kept(row[0], row[1], row[2], row[3])


def _this(owner: str, key: str) -> tuple[sa.ColumnElement[bool], ...]:
    return (_c.token_hash == owner, _c.idempotency_key == key)


async def forget(database: Database, owner: str) -> None:
    """Delete every answer kept for a token value that dies (the token deleted or reissued): nothing
    could replay them, and they hold records that token wrote."""
    await database.execute(_table.delete().where(_c.token_hash == owner))
