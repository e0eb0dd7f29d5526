"""Keyset cursors: what `meta.next_cursor`/`prev_cursor` hold, and how `after`/`before` read them back.

Pure like the planner: no I/O and no SQL. A cursor is the position of one row in one list's order —
the values of the sort fields (the primary key last) — plus a fingerprint of the list it was made for
(object, sort, filters, search), so that a cursor handed to another list is refused (422) rather than
silently read as a position in an order it does not belong to. It is base64url text: opaque to
clients, and nothing in it is trusted: the values are converted by their field's kind like filter
values and bound as parameters (docs/query.md, "Cursors").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.render import Row, render_value
from pb_headless.registry.spec import FieldSpec

_VERSION = 1
_LONGEST = 4096  # characters; a real cursor of a few sort fields is far shorter


@dataclass(frozen=True, slots=True)
class Cursor:
    """A decoded position: one value per ordering (None for NULL); `backwards`: the page before it."""

    values: tuple[Any, ...]
    backwards: bool = False


def fingerprint(
    name: str, order: Sequence[tuple[str, bool]], conditions: Sequence[Any], search: Sequence[str]
) -> str:
    """What a cursor is bound to: the object, the order, the filters (as written, with their values)
    and the search terms. Any difference gives another fingerprint."""
    described = repr((name, tuple(order), tuple(conditions), tuple(search))).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(described).digest()[:9]).decode("ascii")


def encode_cursor(made_for: str, row: Row, fields: Sequence[FieldSpec]) -> str:
    """The cursor of `row`'s position: the values of the ordering `fields`, as text."""
    values = [_as_text(field, row[field.name]) for field in fields]
    raw = orjson.dumps([_VERSION, made_for, values])
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(text: str, made_for: str, fields: Sequence[FieldSpec], backwards: bool) -> Cursor:
    """The position in `text`; ConversionError when it does not decode or was made for another list."""
    try:
        if len(text) > _LONGEST:
            raise ValueError
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        version, found_for, values = orjson.loads(raw)
    except (ValueError, TypeError, binascii.Error, orjson.JSONDecodeError):
        raise ConversionError("is not a cursor of this API") from None
    if version != _VERSION or found_for != made_for or not isinstance(values, list):
        raise ConversionError("was made for another list (object, sort, filters or search)")
    if len(values) != len(fields) or not all(value is None or isinstance(value, str) for value in values):
        raise ConversionError("is not a cursor of this API")
    if values[-1] is None:  # the primary key, last, is never NULL
        raise ConversionError("is not a cursor of this API")
    pairs = zip(fields, values, strict=True)
    converted = tuple(None if value is None else convert(field, value) for field, value in pairs)
    return Cursor(converted, backwards)


def _as_text(field: FieldSpec, value: Any) -> str | None:
    """The value as the query-string text `convert` reads back to the same value."""
    rendered = render_value(field, value)
    if rendered is None:
        return None
    if isinstance(rendered, bool):
        return "true" if rendered else "false"
    return str(rendered)
