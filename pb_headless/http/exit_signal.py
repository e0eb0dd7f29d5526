"""Ending long responses when the server is told to stop.

Servers such as uvicorn wait for open responses to finish before they tell the app to shut down, and
a live stream never finishes by itself. So the first time something that keeps such responses open
asks (`close_on_server_exit`), the process's SIGTERM and SIGINT handlers (the server's) are wrapped
once, to call its `close` before the server's own handler runs.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import weakref
from collections.abc import Callable
from typing import Any, Protocol


class Closable(Protocol):
    def close(self) -> None: ...


# What the signal closes: a process has one set of signal handlers, so one set of what they close.
_closing: weakref.WeakSet[Any] = weakref.WeakSet()


def close_on_server_exit(closable: Closable) -> None:
    """Call `closable.close()` (on the loop) when the server receives SIGTERM or SIGINT."""
    _closing.add(closable)
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGINT):
        current = signal.getsignal(number)
        if not callable(current) or getattr(current, "pb_headless_wrapped", False):
            continue
        signal.signal(number, _closing_first(current))


def close_all() -> None:
    """Close everything registered: what the wrapped handlers call first."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    for closable in list(_closing):
        if loop is not None:
            loop.call_soon_threadsafe(closable.close)
        else:
            closable.close()


def _closing_first(handler: Callable[[int, Any], Any]) -> Callable[[int, Any], Any]:
    def handle(number: int, frame: Any) -> Any:
        close_all()
        return handler(number, frame)

    handle.pb_headless_wrapped = True  # type: ignore[attr-defined]
    return handle
