"""List answers kept by their change-log `ETag`, so the same list asked again at the same positions is
answered without reading its page (docs/caching.md, "Answers kept by their tag").

A tagged list answer is a function of what its tag is a digest of (api/list_tags.py): the request as
written, the token, the declaration, the catalog version and the change-log positions of every table
it reads. A client holding that tag is already told 304 on the strength of it; here the instance
itself keeps the body under the tag and answers the next request for it from memory. A write to any
of those tables moves a position, so the next request derives another tag and reads afresh: what is
kept is never stale, and nothing of it is per process but memory (every instance derives the same
tags). Untagged lists (a `query` narrowing, a table without triggers, `count=estimated`) are never kept.

Bounded by entries and by bytes (`Caches.list_answers`, database/caches.py); an answer over
`KEPT_BODY_MOST` bytes is not kept.
"""

from __future__ import annotations

from dataclasses import dataclass

KEPT_BODY_MOST = 256 * 1024  # a larger answer is read again each time


@dataclass(frozen=True, slots=True)
class KeptList:
    """A list answer's body and the headers of its own (the truncated relations), by its tag."""

    body: bytes
    headers: tuple[tuple[str, str], ...]

    @property
    def weight(self) -> int:
        return len(self.body) + 200  # the object, its tuple and the key beside it


def worth_keeping(body: bytes) -> bool:
    return len(body) <= KEPT_BODY_MOST
