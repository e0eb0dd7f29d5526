"""Serving the site with uvicorn, and the quickstart that prepares a demo before serving."""

from __future__ import annotations

import asyncio
import socket
import sys
from dataclasses import dataclass
from typing import Any

import uvicorn

from examples.site.app import create_site
from examples.site.commands import CommandError, connected, init, listening_socket
from examples.site.config import SiteConfig
from examples.site.passwords import random_password
from examples.site.startup import StartupErrors
from examples.site.users import UserStore
from pb_headless import TokenError, TokenStore
from pb_headless.scopes import has_required_scope

QUICKSTART_TOKEN = "quickstart"
QUICKSTART_SCOPES = "articles.read,authors.read"  # enough for the printed curl line, nothing to write with
ADMIN_NAME = "admin"


def serve(
    config: SiteConfig, host: str, port: int, sock: socket.socket | None = None, *, workers: int = 1
) -> None:
    sock = sock or listening_socket(host, port)
    asyncio.run(preflight(config))
    # pb_headless reads the client address itself, through PB_TRUSTED_PROXIES only: uvicorn must not
    # rewrite it from X-Forwarded-For (its default for 127.0.0.1).
    options: dict[str, Any] = {"lifespan": "on", "proxy_headers": False, "server_header": False}
    if workers > 1:
        serve_workers(sock, workers, options)
        return
    site = create_site(config)
    server = uvicorn.Server(
        uvicorn.Config(StartupErrors(site.app, config.site_dir), log_level="info", **options)
    )
    server.run(sockets=[sock])
    if not server.started:
        raise CommandError("the site did not start (see the log above)")


def serve_workers(sock: socket.socket, workers: int, options: dict[str, Any]) -> None:
    """uvicorn's worker processes on the socket bound here; each builds the site from the same
    environment through the app factory, and restarts if it dies."""
    uvicorn.run(
        "examples.site.app:create_app",
        factory=True,
        fd=sock.fileno(),
        workers=workers,
        log_level="info",
        **options,
    )


async def preflight(config: SiteConfig) -> None:
    """Start and stop the site once, so a broken declaration or an uninitialised database is one line
    before uvicorn starts; the served instance is a fresh one, bound to uvicorn's event loop."""
    async with create_site(config).running():
        pass


@dataclass
class Demo:
    admin_password: str | None  # None: the admin existed, its password was kept
    token: str
    notes: list[str]


def quickstart(config: SiteConfig, host: str, port: int) -> None:
    sock = listening_socket(host, port)
    for line in asyncio.run(init(config)):
        print(line, flush=True)
    asyncio.run(preflight(config))
    demo = asyncio.run(prepare_demo(config))
    print_demo(config, demo, url_host(host), sock.getsockname()[1])
    serve(config, host, port, sock)


async def prepare_demo(config: SiteConfig) -> Demo:
    async with connected(config) as database:
        users = UserStore(database)
        password = None
        if await users.find(ADMIN_NAME) is None:
            password = random_password()
            await users.create(ADMIN_NAME, password)
        token, notes = await quickstart_token(TokenStore(database))
    return Demo(password, token, notes)


async def quickstart_token(tokens: TokenStore) -> tuple[str, list[str]]:
    """A new value for the `quickstart` token, made usable for the curl line if someone changed it."""
    try:
        existing = await tokens.get(QUICKSTART_TOKEN)
    except TokenError:
        _, plain = await tokens.create(QUICKSTART_TOKEN, QUICKSTART_SCOPES)
        return plain, []
    notes = [f"token '{QUICKSTART_TOKEN}' existed: reissued, its old value no longer works"]
    if not existing.enabled:
        await tokens.enable(QUICKSTART_TOKEN)
        notes.append(f"token '{QUICKSTART_TOKEN}' was disabled: enabled it")
    if existing.is_expired():
        await tokens.update(QUICKSTART_TOKEN, clear_expiry=True)
        notes.append(f"token '{QUICKSTART_TOKEN}' had expired: removed its expiry")
    if not has_required_scope(existing.scopes, "articles.read"):
        await tokens.update(QUICKSTART_TOKEN, scopes=[*existing.scopes, "articles.read"])
        notes.append(f"token '{QUICKSTART_TOKEN}' could not read articles: added articles.read")
    _, plain = await tokens.reissue(QUICKSTART_TOKEN)
    return plain, notes


def url_host(host: str) -> str:
    """The address a local client reaches a server listening on `host` at."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def print_demo(config: SiteConfig, demo: Demo, host: str, port: int) -> None:
    base = f"http://{host}:{port}"
    password = (
        f"password: {demo.admin_password}   (shown once)"
        if demo.admin_password
        else "password: unchanged (the one set when it was created)"
    )
    lines = [
        *demo.notes,
        "",
        f"pb_headless example site — database {config.database_label}",
        "",
        f"  Site         {base}/",
        f"  Admin login  {base}/mgr/login",
        f"               user: {ADMIN_NAME}   {password}",
        f"  API base     {base}/api/pb/v1",
        f"  API docs     {base}/mgr/pb/docs?ctx=mgr   (signed in)",
        f"  Token        '{QUICKSTART_TOKEN}', shown once:",
        f"               {demo.token}",
        "",
        "Try the API:",
        f'  curl -H "Authorization: Bearer {demo.token}" {base}/api/pb/v1/objects/articles',
        "",
        f"Serving on {base} (Ctrl+C stops)",
    ]
    print("\n".join(lines), flush=True)
    sys.stdout.flush()
