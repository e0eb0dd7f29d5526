"""List answers kept with their change-log `ETag`, so the same list asked again at the same positions is
answered without reading its page (docs/caching.md, "Answers kept by their tag").

A tagged list answer is a function of what its tag is a digest of (api/list_tags.py): the request as
written, the token, the declaration, the catalog version and the change-log positions of every table
it reads. A client holding that tag is already told 304 on the strength of it; here the instance
itself keeps the body with the tag and answers the next request with the same tag from memory. A
write to any of those tables moves a position, so the next request derives another tag and reads
afresh: what is kept is never older than the data, and nothing of it is per process but memory
(every instance derives the same tags). Untagged lists (a `query` narrowing, a table without
triggers, `count=estimated`) are never kept.

One entry per request as asked (`ListTag.asked`: object, query string as written, token, API
address): the answer of a newer tag replaces the older one, so writes do not fill the cache with
answers no tag will name again. Bounded by entries and bytes (`Caches.list_answers`,
database/caches.py); an answer over `KEPT_BODY_MOST` bytes, or asked with a query string over
`KEPT_PLAN_QUERY`, is not kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from pb_headless.database.caches import KEPT_PLAN_QUERY

KEPT_BODY_MOST = 256 * 1024  # a larger answer is read again each time


@dataclass(frozen=True, slots=True)
class KeptList:
    """A list answer's tag, body and headers of its own (the truncated relations)."""

    tag: str
    body: bytes
    headers: tuple[tuple[str, str], ...]

    @property
    def weight(self) -> int:
        return len(self.body) + KEPT_PLAN_QUERY  # the key's query string, at most that, and the rest
