"""JSON answers (orjson) and the caching rules of CONTRACT §11."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from starlette.responses import Response

NO_STORE = "no-store"
OBJECT_CACHING = "private, no-cache"


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)


def json_response(
    content: Any, status_code: int = 200, headers: Mapping[str, str] | None = None, cache: str | None = None
) -> JSONResponse:
    response = JSONResponse(content, status_code=status_code, headers=dict(headers or {}))
    if cache:
        response.headers["Cache-Control"] = cache
    return response


def empty_response(status_code: int = 204, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status_code=status_code, headers=dict(headers or {}))
