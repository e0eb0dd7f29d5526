"""Addressing a record: its id as written in a path, and the address of a record the API serves."""

from __future__ import annotations

from typing import Any

from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.render import render_value
from pb_headless.registry import ObjectSpec

KEPT_KEYS = 1024  # ids kept per object spec, each a canonical id of at most:
KEPT_KEY_TEXT = 64  # characters


def record_key(spec: ObjectSpec, written: str) -> Any | None:
    """The primary-key value a path segment addresses, or None (answered 404).

    A record is addressed only by its canonical id, the text the API itself renders for it: `1`,
    never `+1`, ` 1` or `01`, so one record has one address (and one cache entry). The key of a
    canonical id depends on the spec's key field alone, so it is kept with the spec (oldest out first).
    """
    keys: dict[str, Any] | None = spec.derived.get("records.keys")
    if keys is None:
        keys = spec.derived["records.keys"] = {}
    elif (kept := keys.get(written)) is not None:
        return kept
    try:
        key = convert(spec.pk, written)
    except ConversionError:
        return None
    if key is None or canonical_id(spec, key) != written:
        return None
    if len(written) <= KEPT_KEY_TEXT:
        if len(keys) >= KEPT_KEYS:
            del keys[next(iter(keys))]
        keys[written] = key
    return key


def canonical_id(spec: ObjectSpec, key: Any) -> str:
    return str(render_value(spec.pk, key))


def record_address(api_root: str, spec: ObjectSpec, key: Any) -> str:
    return f"{api_root}/objects/{spec.name}/{canonical_id(spec, key)}"
