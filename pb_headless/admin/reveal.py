"""The one-time display of a new token value, after a redirect (post/redirect/get).

Create and Reissue answer 303 to `/tokens/reveal`, so reloading or going Back never posts again.
The value crosses that redirect split in two halves that are useless apart: a random one-time pad
kept in the host's session, and the value XOR that pad in the address. The first display takes the
pad out of the session; any later load of the same address finds no pad and says the value is gone.
Nothing is stored on the server, so any instance can show it, and neither the session cookie nor
the address (browser history, access logs) ever holds the value itself.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from pb_headless.admin.csrf import session_of

SESSION_KEY = "pb_reveal"
KEPT = 4  # pending displays per session (a few tabs at once); older ones are dropped


@dataclass(frozen=True, slots=True)
class Reveal:
    """What the reveal page shows once."""

    name: str
    plain: str
    reissued: bool
    warnings: tuple[str, ...]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _xor(left: bytes, right: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(left, right, strict=True))


def remember(
    request: Request, name: str, plain: str, *, reissued: bool, warnings: tuple[str, ...] = ()
) -> str:
    """Keep the pad in the session; returns the query string of the reveal address."""
    value = plain.encode("ascii")
    pad = secrets.token_bytes(len(value))
    key = secrets.token_urlsafe(9)
    pending: dict[str, Any] = dict(session_of(request).get(SESSION_KEY) or {})
    while len(pending) >= KEPT:
        pending.pop(next(iter(pending)))
    pending[key] = {"pad": _b64(pad), "name": name, "reissued": reissued, "warnings": list(warnings)}
    session_of(request)[SESSION_KEY] = pending
    return urlencode({"key": key, "value": _b64(_xor(value, pad)), "name": name})


def is_token_value(plain: str) -> bool:
    return plain.startswith("pb_") and plain[3:].isascii() and plain[3:].isalnum()


def take(request: Request, accepts: Callable[[str], bool] = is_token_value) -> Reveal | None:
    """The value behind this address, once; None when it was shown already or never existed, or when
    it is not the kind of value the page shows (`accepts`: a token's by default)."""
    key, masked = request.query_params.get("key", ""), request.query_params.get("value", "")
    pending: dict[str, Any] = dict(session_of(request).get(SESSION_KEY) or {})
    entry = pending.pop(key, None)
    if entry is None:
        return None
    session_of(request)[SESSION_KEY] = pending  # gone before anything is shown: a reload finds nothing
    try:
        pad, value = _unb64(entry["pad"]), _unb64(masked)
        plain = _xor(value, pad).decode("ascii")
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        return None  # an address edited by hand: nothing to show
    if not accepts(plain):
        return None
    return Reveal(str(entry["name"]), plain, bool(entry["reissued"]), tuple(entry.get("warnings") or ()))
