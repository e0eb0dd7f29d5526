"""JSON answers and the caching rules of docs/endpoints.md ("Caching"): one renderer for the whole library."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import orjson
from starlette.responses import Response

NO_STORE = "no-store"  # /me, /openapi.json, every 401 and 403
OBJECT_CACHING = "private, no-cache"  # every object answer, and the answers of custom routes
_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_NAIVE_UTC


def _default(value: Any) -> Any:
    # Aggregates in custom routes come back as Decimal; decimals render as strings ("19.99").
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def request_header(scope: Mapping[str, Any], name: bytes) -> str | None:
    """The first value of a request header (`name` in lower case), as `Request.headers.get` gives it,
    read from the ASGI scope without making a header object."""
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def json_bytes(content: Any) -> bytes:
    return orjson.dumps(content, default=_default, option=_OPTIONS)


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


def json_response(
    content: Any, status_code: int = 200, headers: Mapping[str, str] | None = None, cache: str | None = None
) -> JSONResponse:
    response = JSONResponse(content, status_code=status_code, headers=headers)
    if cache:
        if headers and any(name.lower() == "cache-control" for name in headers):
            response.headers["Cache-Control"] = cache  # replaces the one given
        else:  # the usual case: appended as it goes out, without a header object
            response.raw_headers.append((b"cache-control", cache.encode("latin-1")))
    return response


def json_prepared(
    body: bytes,
    headers: Mapping[str, str],
    cache: str,
    status_code: int = 200,
    *,
    raw_headers: list[tuple[bytes, bytes]] | None = None,
) -> JSONResponse:
    """`json_response` for a body already rendered (`json_bytes`) and headers that carry no
    `Cache-Control` of their own: the same response, raw headers in the same order, made without
    Starlette's header handling. Still a `Response` for everything after it. `raw_headers`: those of
    an earlier such answer with the same body and headers, copied instead of made again."""
    response = JSONResponse.__new__(JSONResponse)
    response.status_code = status_code
    response.background = None
    response.body = body
    if raw_headers is not None:
        response.raw_headers = raw_headers.copy()
        return response
    raw = (
        [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
        if headers
        else []
    )
    raw += (
        (b"content-length", b"%d" % len(body)),
        (b"content-type", b"application/json"),
        (b"cache-control", cache.encode("latin-1")),
    )
    response.raw_headers = raw
    return response


def empty_response(status_code: int = 204, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status_code=status_code, headers=dict(headers or {}))
