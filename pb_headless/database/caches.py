"""What one API object keeps between requests, each cache with its bound (docs/performance.md, "What a
process keeps"): created by `HeadlessAPI`, reachable from every `RequestContext`."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from pb_headless.database.totals import Totals

K = TypeVar("K")
V = TypeVar("V")

KEPT_STATEMENTS = 512  # compiled statements of plan shapes (each a few KB of SQL and converters)
KEPT_FIXED = 64  # compiled statements of the library's own constant queries (a handful in use)
KEPT_BUILT = 256  # token look-ups kept built, by the row the database gave


class Bounded(Generic[K, V]):
    """A dict of at most `size` entries; the least recently used goes first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> V:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value


class Caches:
    """The caches of one API object and its database."""

    def __init__(self) -> None:
        self.statements: Bounded[object, object] = Bounded(KEPT_STATEMENTS)
        self.fixed: Bounded[object, object] = Bounded(KEPT_FIXED)
        self.built: Bounded[object, object] = Bounded(KEPT_BUILT)
        self.totals = Totals()

    def sizes(self) -> dict[str, int]:
        """Entries held now, by cache (what an operator or a test looks at)."""
        return {
            "statements": len(self.statements),
            "fixed": len(self.fixed),
            "built": len(self.built),
            "totals": self.totals.size(),
        }
