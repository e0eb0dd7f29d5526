"""Sign-in throttling: a growing lock after repeated failures, per user name and per client address.

The counts live in the database (`site_login_failures`), so every instance behind a load balancer
sees the same ones. Failures count within a window; from the threshold on, each further failure
doubles the time before the next attempt is even checked (30 s, 1 min, 2 min, … at most 15 min).
A locked attempt is refused before the password is looked at, so it cannot be used to guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from databases import Database

from examples.site.schema import login_failures

WINDOW = timedelta(minutes=15)  # failures older than this are forgotten
USER_THRESHOLD = 5  # failures for one user name before it is locked
ADDRESS_THRESHOLD = 20  # several people may share one address (an office, a proxy)
FIRST_LOCK = timedelta(seconds=30)
LONGEST_LOCK = timedelta(minutes=15)
MAX_KEY = 200


def now_utc() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # stored naive, in UTC, as every site table


def lock_for(failures: int, threshold: int) -> timedelta:
    """How long a key with `failures` is locked after its last failure (zero below the threshold)."""
    if failures < threshold:
        return timedelta(0)
    doubling = min(failures - threshold, 10)
    return min(FIRST_LOCK * (2**doubling), LONGEST_LOCK)


def user_key(username: str) -> str:
    return ("user:" + username.strip().casefold())[:MAX_KEY]


def address_key(address: str) -> str:
    return ("address:" + address)[:MAX_KEY]


@dataclass(frozen=True)
class Lock:
    until: datetime

    def wait_text(self, now: datetime) -> str:
        seconds = max(1, math.ceil((self.until - now).total_seconds()))
        if seconds < 90:
            return f"{seconds} seconds"
        return f"{math.ceil(seconds / 60)} minutes"


class LoginThrottle:
    def __init__(self, database: Database) -> None:
        self.database = database

    async def lock(self, username: str, address: str, now: datetime | None = None) -> Lock | None:
        """The lock in force on this user name or this address, if any (the later one)."""
        now = now or now_utc()
        thresholds = {user_key(username): USER_THRESHOLD, address_key(address): ADDRESS_THRESHOLD}
        query = sa.select(login_failures).where(login_failures.c.key.in_(list(thresholds)))
        locks = []
        for row in await self.database.fetch_all(query):
            data = row._mapping
            until = data["last_failure_at"] + lock_for(data["failures"], thresholds[data["key"]])
            if until > now and data["last_failure_at"] > now - WINDOW:
                locks.append(until)
        return Lock(max(locks)) if locks else None

    async def failed(self, username: str, address: str, now: datetime | None = None) -> None:
        """Count one failure for the user name and for the address, atomically in the database."""
        now = now or now_utc()
        for key in (user_key(username), address_key(address)):
            await self._count(key, now)

    async def succeeded(self, username: str) -> None:
        """A right password clears the user name's count (the address's decays on its own)."""
        await self.database.execute(login_failures.delete().where(login_failures.c.key == user_key(username)))

    async def _count(self, key: str, now: datetime) -> None:
        # One UPDATE does the arithmetic, so two instances counting at once both count.
        fresh = login_failures.c.last_failure_at > now - WINDOW
        update = (
            login_failures.update()
            .where(login_failures.c.key == key)
            .values(failures=sa.case((fresh, login_failures.c.failures + 1), else_=1), last_failure_at=now)
        )
        exists = sa.select(sa.func.count()).select_from(login_failures).where(login_failures.c.key == key)
        if await self.database.fetch_val(exists):
            await self.database.execute(update)
            return
        try:
            await self.database.execute(
                login_failures.insert().values(key=key, failures=1, last_failure_at=now)
            )
        except Exception:  # another instance inserted it first (each driver names the conflict its own way)
            await self.database.execute(update)
