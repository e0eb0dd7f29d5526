"""The generic object endpoints: list, show, create, update, delete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api.responses import OBJECT_CACHING, json_response
from pb_headless.errors import NotFound
from pb_headless.registry import ObjectSpec

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

Handler = Callable[["HeadlessAPI", Request, ObjectSpec, str], Awaitable[Response]]


async def list_records(api: HeadlessAPI, request: Request, spec: ObjectSpec, _: str) -> Response:
    raise NotFound()


async def show_record(api: HeadlessAPI, request: Request, spec: ObjectSpec, record_id: str) -> Response:
    raise NotFound()


HANDLERS: dict[str, Handler] = {"list": list_records, "show": show_record}
__all__ = ["HANDLERS", "OBJECT_CACHING", "json_response"]
