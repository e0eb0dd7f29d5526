"""Cursors: the opaque text a client keeps to resume the feed or the stream after a position."""

from __future__ import annotations

import base64
import binascii

_TAG = "pbc1."


def encode_cursor(position: int) -> str:
    return base64.urlsafe_b64encode(f"{_TAG}{position}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int | None:
    """The position a cursor stands for, or None when it is not one this library wrote."""
    if not cursor or len(cursor) > 40:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    digits = text.removeprefix(_TAG)
    if digits == text or not digits.isascii() or not digits.isdigit() or len(digits) > 19:
        return None
    return int(digits) if encode_cursor(int(digits)) == cursor else None
