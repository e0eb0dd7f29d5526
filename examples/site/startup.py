"""A site that cannot start says why in one line — in the console, and in uvicorn's log.

A broken declaration file, `routes.py` or `models.py` (a syntax error included), an uninitialised
database or a bad variable each stop the start with one line naming the file (and line) to fix.
Set PB_DEBUG=1 to get the full traceback as well.
"""

from __future__ import annotations

import logging
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from examples.site.config import EXAMPLE_DIR, SiteConfig

DEBUG_VARIABLE = "PB_DEBUG"
log = logging.getLogger("uvicorn.error")


def is_debug() -> bool:
    return (os.environ.get(DEBUG_VARIABLE) or "").strip().lower() in {"1", "true", "yes", "on"}


def one_line(error: BaseException, site_dir: Path | None = None) -> str:
    """The error as one line. Refusals (ValueErrors such as a DeclarationError, and the site's own
    refusals) already name what to fix; anything else is placed at its line in the site folder."""
    text = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    if isinstance(error, ValueError | RuntimeError) and text and not isinstance(error, NotImplementedError):
        return text[:500]
    if isinstance(error, SyntaxError) and error.filename:
        where = f"{error.filename}, line {error.lineno}"
        text = error.msg
    else:
        where = _place_in(error, site_dir)
    described = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return (f"{where}: {described}" if where else described)[:500]


def _place_in(error: BaseException, site_dir: Path | None) -> str:
    """`file, line N` of the last traceback frame inside the site folder, if any."""
    if site_dir is None:
        return ""
    folder = str(site_dir.resolve())
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(folder)]
    return f"{frames[-1].filename}, line {frames[-1].lineno}" if frames else ""


class StartupErrors:
    """The outermost ASGI layer: a lifespan startup failure reaches the server as its one line.

    Starlette reports a failed startup with the whole traceback as the message, which uvicorn logs;
    this holds that message back and sends the one line instead (PB_DEBUG=1 lets it through).
    """

    def __init__(self, app: ASGIApp, site_dir: Path) -> None:
        self.app = app
        self.site_dir = site_dir

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan" or is_debug():
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def sending(message: Message) -> None:
            if message["type"] == "lifespan.startup.failed":
                held.append(message)  # replaced by the one line once the error itself is known
                return
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except BaseException as error:
            if held:
                await send({"type": "lifespan.startup.failed", "message": one_line(error, self.site_dir)})
            raise
        for message in held:  # failed without raising: pass Starlette's message on as it was
            await send(message)


def site_dir_of(config: SiteConfig | None) -> Path:
    return config.site_dir if config else Path(os.environ.get("PB_SITE_DIR") or EXAMPLE_DIR)


def served(build: Callable[[], Any], config: SiteConfig | None = None) -> Any:
    """`build()`'s ASGI app, wrapped in StartupErrors; a site that cannot even be built (a broken
    declaration file is read while building) is one line in the server's log and exit status 1."""
    site_dir = site_dir_of(config)
    try:
        app = build()
    except Exception as error:
        if is_debug():
            raise
        log.error(one_line(error, site_dir))
        raise SystemExit(1) from None
    return StartupErrors(app, site_dir)
