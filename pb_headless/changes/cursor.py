"""Cursors: the text a client keeps to resume the feed or the stream after a position.

Clients treat them as opaque. Their form is also a pattern the OpenAPI document states, so that
every string matching it is a cursor (`c` and at most 15 hex digits: below 2^60, far from any
database's integer limit); anything else is answered 422. A cursor of a filtered feed carries the
digest of its filter set after a dot (`c1f.3a9e01bc`, query/planner.py `selection_digest`): it is
good for that filter set only (docs/changes.md, "Filtered changes").
"""

from __future__ import annotations

import re

PATTERN = "^c[0-9a-f]{1,15}(\\.[0-9a-f]{8})?$"
_CURSOR = re.compile(PATTERN)


def encode_cursor(position: int, digest: str = "") -> str:
    return f"c{position:x}.{digest}" if digest else f"c{position:x}"


def decode_cursor(cursor: str) -> tuple[int, str] | None:
    """The position a cursor stands for and the digest of its filter set ("" for none), or None when
    it is not a cursor."""
    if not _CURSOR.fullmatch(cursor):
        return None
    position, _, digest = cursor[1:].partition(".")
    return int(position, 16), digest
