"""What one API object keeps between requests, each cache with its bound (docs/performance.md, "What a
process keeps"): created by `HeadlessAPI`, reachable from every `RequestContext`."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from pb_headless.database.allocator import release_freed_memory
from pb_headless.database.budget import SearchShares
from pb_headless.database.totals import Totals

K = TypeVar("K")
V = TypeVar("V")

KEPT_STATEMENTS = 512  # compiled statements of plan shapes
KEPT_STATEMENT_BYTES = 4 * 1024 * 1024  # and their size: SQL and converters grow with `in` lists
KEPT_FIXED = 64  # compiled statements of the library's own constant queries (a handful in use)
KEPT_BUILT = 256  # token look-ups kept built, by the row the database gave
KEPT_STEADY = 256  # constant queries' rows (the token look-up), by values and SQLite's data version
KEPT_PLANS = 512  # read plans, by object and query string as written (query strings of at most:)
KEPT_PLAN_BYTES = 2 * 1024 * 1024  # and their size: a plan holds its filters' values (`in` lists)
KEPT_LISTS = 256  # list answers kept by their change-log tag (api/kept_lists.py)
KEPT_LIST_BYTES = 8 * 1024 * 1024  # and their bodies' bytes
KEPT_PLAN_QUERY = 1024  # bytes; a longer query string is planned on every request
# Statements compiled between two returns of freed memory to the system (database/allocator.py):
# once the compiled statements could all have been replaced, what they held is given back.
RELEASE_EVERY = KEPT_STATEMENTS


class Bounded(Generic[K, V]):
    """A dict of at most `size` entries and, when `max_bytes` is given, at most that many bytes as the
    entries' own `weight` estimates them; the least recently used goes first."""

    def __init__(self, size: int, max_bytes: int | None = None) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> V:
        replaced = self._entries.pop(key, None)
        self.bytes += _weight(value) - (0 if replaced is None else _weight(replaced))
        self._entries[key] = value
        while len(self._entries) > self.size or (self.max_bytes is not None and self.bytes > self.max_bytes):
            _, evicted = self._entries.popitem(last=False)
            self.bytes -= _weight(evicted)
        return value


def _weight(value: object) -> int:
    """The bytes an entry holds, as it estimates them (`weight`); 0 for entries of one fixed size."""
    return int(getattr(value, "weight", 0))


class Caches:
    """The caches of one API object and its database."""

    def __init__(self) -> None:
        self.statements: Bounded[object, object] = Bounded(KEPT_STATEMENTS, KEPT_STATEMENT_BYTES)
        self.constant_statements: Bounded[object, object] = Bounded(KEPT_FIXED)
        self.built_rows: Bounded[object, object] = Bounded(KEPT_BUILT)
        self.plans: Bounded[object, object] = Bounded(KEPT_PLANS, KEPT_PLAN_BYTES)
        self.rows_at_data_version: Bounded[object, object] = Bounded(KEPT_STEADY)
        self.list_answers: Bounded[object, object] = Bounded(KEPT_LISTS, KEPT_LIST_BYTES)
        self.totals = Totals()
        self.searches = SearchShares()  # searches running per token (budget.py): at most one entry each
        self.compiled = 0  # statements compiled since freed memory was last given back

    def note_compiled(self) -> None:
        """A statement shape was compiled (a miss of `statements`); every RELEASE_EVERY of them, the
        pages the replaced ones freed go back to the system instead of staying in RSS."""
        self.compiled += 1
        if self.compiled >= RELEASE_EVERY:
            self.compiled = 0
            release_freed_memory()

    def sizes(self) -> dict[str, int]:
        """Entries held now, by cache (what an operator or a test looks at; the names of this report
        stay as they were when the caches were renamed: `fixed` is `constant_statements`, `built` is
        `built_rows`, `steady` is `rows_at_data_version`)."""
        return {
            "statements": len(self.statements),
            "statement_bytes": self.statements.bytes,
            "fixed": len(self.constant_statements),
            "built": len(self.built_rows),
            "plans": len(self.plans),
            "plan_bytes": self.plans.bytes,
            "steady": len(self.rows_at_data_version),
            "lists": len(self.list_answers),
            "list_bytes": self.list_answers.bytes,
            "totals": self.totals.size(),
            "total_bytes": self.totals.bytes,
            "searches": len(self.searches),
            "compiled": self.compiled,
        }
