"""`Prefer: handling=strict|lenient` (RFC 7240, PostgREST's form) on list and show (docs/query.md).

Lenient is the default the specification asks for: what a read cannot use is dropped and named in
`meta.ignored`. A client that would rather hear about a typo asks for strict handling, and then
anything the planner would drop is a 400 naming each item as written. The check keys off the plan's
`ignored` list alone, so every parameter the planner learns to drop is covered without a change here.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request

from pb_headless.errors import BadRequest
from pb_headless.http.responses import OBJECT_CACHING

PREFER = "Prefer"
APPLIED = "Preference-Applied"
STRICT = "strict"
LENIENT = "lenient"


def requested_handling(request: Request) -> str | None:
    """`strict` or `lenient` when the client asked for one, else None.

    Preferences are comma-separated, in one header or several; RFC 7240 §2 makes the first mention
    of a preference the one that counts, and an unknown value is no preference at all.
    """
    for header in request.headers.getlist(PREFER):
        for preference in header.split(","):
            token = preference.partition(";")[0]
            name, _, value = token.partition("=")
            if name.strip().lower() != "handling":
                continue
            value = value.strip().strip('"').lower()
            return value if value in (STRICT, LENIENT) else None
    return None


def applied_handling(request: Request, ignored: Sequence[str]) -> dict[str, str]:
    """The `Preference-Applied` header for the answer; raises 400 when strictness finds dropped items."""
    handling = requested_handling(request)
    if handling is None:
        return {}
    applied = {APPLIED: f"handling={handling}"}
    if handling == STRICT and ignored:
        named = ", ".join(ignored)
        raise BadRequest(
            f"This request asked for strict handling (Prefer: handling=strict) and would ignore: {named}.",
            headers={**applied, "Cache-Control": OBJECT_CACHING},  # an object answer, as its 422 is
            details={"ignored": list(ignored)},
        )
    return applied
