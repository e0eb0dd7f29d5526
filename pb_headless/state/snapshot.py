"""What one instance compiles once per shared state version: catalog, settings, live-token summary.

Every request reads the version (in the same query as its token) and gets the snapshot for it; a
snapshot is rebuilt only when the version moved, so per-request work stays a dictionary look-up.
Anything else worth computing once per version (the CORS policy, OpenAPI parts) hangs off
`Snapshot.derive`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import as_aware
from pb_headless.registry import ApiRegistry, Catalog
from pb_headless.settings import SettingsStore
from pb_headless.tables import tokens

T = TypeVar("T")

# Where the API leaves the snapshot an answer was made with, so `CORSMiddleware` decorates that answer
# from the same settings version without a query of its own.
SNAPSHOT_SCOPE_KEY = "pb_headless.snapshot"

_NEVER_EXPIRING = (
    sa.select(sa.func.count())
    .select_from(tokens)
    .where(tokens.c.enabled.is_(True), tokens.c.expires_at.is_(None))
)
_LATEST_EXPIRY = sa.select(sa.func.max(tokens.c.expires_at)).where(tokens.c.enabled.is_(True))


@dataclass(frozen=True, eq=False)
class Snapshot:
    version: tuple[int, int]
    catalog: Catalog
    settings: Mapping[str, str]
    live_until: datetime | None  # None: no enabled token; datetime.max: one never expires
    _derived: dict[str, Any] = field(default_factory=dict)

    def has_live_token(self, now: datetime | None = None) -> bool:
        return self.live_until is not None and self.live_until > (now or datetime.now(UTC))

    def is_dormant(self, now: datetime | None = None) -> bool:
        """docs/authentication.md: no enabled, unexpired token, or no published object."""
        return not self.catalog or not self.has_live_token(now)

    def derive(self, key: str, build: Callable[[Snapshot], T]) -> T:
        """A value computed once for this version (a race only computes it twice)."""
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]


class SnapshotCache:
    """Holds the snapshot of the newest version seen; one rebuild at a time."""

    def __init__(self, database: Database, registry: ApiRegistry) -> None:
        self.database = database
        self.registry = registry
        self._current: Snapshot | None = None
        self._lock = asyncio.Lock()

    @property
    def current(self) -> Snapshot | None:
        return self._current

    def at_hand(self, shared_version: int) -> Snapshot | None:
        """The current snapshot when it is the one of `shared_version` (nearly every request), else None:
        a plain check, so that the common case makes no coroutine; `get` builds the others."""
        current = self._current
        if current is not None and current.version == (shared_version, self.registry.version):
            return current
        return None

    async def get(self, shared_version: int) -> Snapshot:
        version = (shared_version, self.registry.version)
        current = self._current
        if current is not None and current.version == version:
            return current
        async with self._lock:
            current = self._current
            if current is None or current.version != version:
                current = await self._build(version)
                self._current = current
        return current

    async def _build(self, version: tuple[int, int]) -> Snapshot:
        catalog = await self.registry.build(self.database, version[0])
        settings = await SettingsStore(self.database).all()
        return Snapshot(
            version=version,
            catalog=catalog,
            settings=settings,
            live_until=await self._live_until(),
        )

    async def _live_until(self) -> datetime | None:
        if await self.database.fetch_val(_NEVER_EXPIRING):
            return datetime.max.replace(tzinfo=UTC)
        return as_aware(await self.database.fetch_val(_LATEST_EXPIRY))
