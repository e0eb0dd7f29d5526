"""Calling a host's hook (a user loader, a guard, an endpoint) that may be sync or async."""

from __future__ import annotations

import inspect
from typing import Any


async def maybe_await(value: Any) -> Any:
    """The value itself, or what it resolves to when the hook returned an awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


def is_async_callable(target: Any) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    call = None if inspect.isroutine(target) else type(target).__call__
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(call)
