"""Entity tags and conditional requests (`ETag`, `If-None-Match`, `If-Match`) — docs/caching.md.

A tag is a digest of the answer's body, or of what determines it (a list's tag from the change log,
api/list_tags.py): the same request against the same data gives the same tag on every instance, and
any change to the body changes it. `If-None-Match` compares weakly (a `W/`
tag matches its strong twin), `If-Match` strongly (a weak tag never matches), as RFC 9110 says.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping

from starlette.datastructures import Headers
from starlette.responses import Response

from pb_headless.http.responses import json_bytes

# Who the answer was for: a shared cache must not hand one token's answer to another.
OBJECT_VARY = "Authorization, X-API-Key"
_VARY = OBJECT_VARY.encode("latin-1")
# The headers a 304 repeats from the 200 it stands for (RFC 9110 §15.4.5); rate-limit headers are
# added to every answer by the application.
_KEPT_ON_304 = frozenset((b"etag", b"cache-control", b"vary", b"x-truncated-relations"))


def entity_tag(body: bytes) -> str:
    """The strong tag of a body: 160 bits of its SHA-256, quoted."""
    digest = hashlib.sha256(body).digest()[:20]
    return '"' + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=") + '"'


def record_tag(record: Mapping[str, object]) -> str:
    """The tag of a record's plain show answer (`{"data": record}`), as `show` would send it."""
    return entity_tag(json_bytes({"data": record}))


def _tags(header: str) -> list[str] | None:
    """The tags of an `If-Match`/`If-None-Match` value as written (`W/"a"`, `"b"`); None for `*`."""
    if header.strip() == "*":
        return None
    return [part.strip() for part in header.split(",") if part.strip()]


def none_match(header: str | None, tag: str) -> bool:
    """Whether `If-None-Match` holds `tag` (weak comparison) or `*`: then the client's copy is current."""
    if header is None:
        return False
    tags = _tags(header)
    return tags is None or tag.removeprefix("W/") in (written.removeprefix("W/") for written in tags)


def unquoted_tags(header: str) -> list[str]:
    """The values of an `If-Match`/`If-None-Match` that are not entity-tags (`abc` where `"abc"` was
    meant): RFC 9110 §8.8.3 quotes every tag, so such a value can never match."""
    return [tag for tag in _tags(header) or [] if not _is_quoted(tag.removeprefix("W/"))]


def _is_quoted(tag: str) -> bool:
    return len(tag) >= 2 and tag.startswith('"') and tag.endswith('"') and '"' not in tag[1:-1]


def strong_match(header: str, tag: str | None) -> bool:
    """Whether `If-Match` holds `tag` (strong comparison: a weak tag never matches); `*` matches any
    existing record (`tag` is not None)."""
    if tag is None:
        return False
    tags = _tags(header)
    return tags is None or tag in tags


def conditional(if_none_match: str | None, response: Response, tag: str | None = None) -> Response:
    """The 200 `response` with its `ETag` (`tag`, or the digest of its body) and `Vary`, or a 304 when
    the client's copy, named by the request's `If-None-Match` (`http/responses.py`, `request_header`),
    is current."""
    tag = tag or entity_tag(bytes(response.body))
    raw = response.raw_headers
    names = [name for name, _ in raw]
    if b"etag" in names or b"vary" in names:
        response.headers["ETag"] = tag
        response.headers["Vary"] = OBJECT_VARY
    else:  # the usual case: appended as bytes, without a header object's search
        raw.append((b"etag", tag.encode("latin-1")))
        raw.append((b"vary", _VARY))
    if not none_match(if_none_match, tag):
        return response
    return _not_modified(response.raw_headers)


def _not_modified(raw: list[tuple[bytes, bytes]]) -> Response:
    """The 304 standing for a 200 with these raw headers: the ones RFC 9110 has it repeat, in their
    order (a name given twice keeps its last value), made without Starlette's header handling (a
    304 has no body, so no content length or type: what `Response(status_code=304)` leaves out)."""
    kept: dict[bytes, bytes] = {}
    for name, value in raw:
        if name in _KEPT_ON_304:
            kept[name] = value
    response = Response.__new__(Response)
    response.status_code = 304
    response.background = None
    response.body = b""
    response.raw_headers = list(kept.items())
    return response


def not_modified(headers: Headers, tag: str, cache: str) -> Response | None:
    """The 304 for a client whose copy is current, decided before the answer is made (its tag derived
    from what determines the body); None when the answer must be made."""
    if not none_match(headers.get("if-none-match"), tag):
        return None
    return Response(status_code=304, headers={"ETag": tag, "Cache-Control": cache, "Vary": OBJECT_VARY})
