"""Cursors: the text a client keeps to resume the feed or the stream after a position.

Clients treat them as opaque. Their form is also a pattern the OpenAPI document states, so that
every string matching it is a cursor (`c` and at most 15 hex digits: below 2^60, far from any
database's integer limit); anything else is answered 422.
"""

from __future__ import annotations

import re

PATTERN = "^c[0-9a-f]{1,15}$"
_CURSOR = re.compile(PATTERN)


def encode_cursor(position: int) -> str:
    return f"c{position:x}"


def decode_cursor(cursor: str) -> int | None:
    """The position a cursor stands for, or None when it is not a cursor."""
    return int(cursor[1:], 16) if _CURSOR.fullmatch(cursor) else None
