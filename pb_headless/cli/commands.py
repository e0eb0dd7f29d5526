"""What each command does, on one connected database; every handler returns the text to print."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import orjson
from databases import Database

from pb_headless.cli import migrate
from pb_headless.cli.checks import check_token_request
from pb_headless.cli.database import connected, database_url
from pb_headless.cli.output import CommandError, warn
from pb_headless.cli.parser import PROGRAM
from pb_headless.cli.site import site_api
from pb_headless.cli.webhook_commands import WEBHOOK_COMMANDS
from pb_headless.settings import SettingsStore, checked_setting
from pb_headless.tables import DEFAULT_SETTINGS, install
from pb_headless.tokens import TokenError, TokenInfo, TokenStore

Handler = Callable[[Database, argparse.Namespace], Awaitable[str]]


def run(args: argparse.Namespace) -> str:
    creating = args.command == "install" or (args.command == "migrate" and args.action is None)
    url = database_url(args.database, creating=creating)
    return asyncio.run(_run(url, args))


async def _run(url: str, args: argparse.Namespace) -> str:
    async with connected(url) as database, contextlib.AsyncExitStack() as cleanup:
        args.cleanup = cleanup  # what a command opened besides the database (site.py)
        return await COMMANDS[(args.command, getattr(args, "action", None))](database, args)


async def _install(database: Database, args: argparse.Namespace) -> str:
    await install(database)
    return "installed the library's tables and default settings"


async def _token_create(database: Database, args: argparse.Namespace) -> str:
    await check_token_request(database, args)
    store = TokenStore(database)
    try:
        info, plain = await store.create(
            args.name, args.scopes, expires_at=args.expires_at, user_id=args.user
        )
    except TokenError:
        if not await _exists(store, args.name):
            raise
        if not args.reissue_if_exists:
            raise CommandError(_exists_message(args.name)) from None
        return await _reissue_existing(store, args)
    user = f", acting as user {info.user_id}" if info.user_id else ""
    scopes = ",".join(info.scopes)
    return f"created token '{info.name}' with scopes {scopes}{user}; its value, shown once:\n{plain}"


async def _exists(store: TokenStore, name: str) -> bool:
    return any(token.name == name.strip() for token in await store.list())


def _exists_message(name: str) -> str:
    """Re-running getting-started's `export TOKEN=$(… token create …)` lands here: say what to do."""
    return (
        f"a token named '{name}' already exists, and its value was shown only when it was made: "
        f"'{PROGRAM} token reissue --name \"{name}\"' prints a new value (the old one stops working), "
        "or add --reissue-if-exists to this command, or choose another --name"
    )


async def _reissue_existing(store: TokenStore, args: argparse.Namespace) -> str:
    """--reissue-if-exists: the token ends up exactly as the command asked, enabled, with a new value."""
    await store.update(
        args.name,
        scopes=args.scopes,
        expires_at=args.expires_at,
        clear_expiry=args.expires_at is None,
        user_id=args.user,
        clear_user=args.user is None,
    )
    await store.enable(args.name)
    info, plain = await store.reissue(args.name)
    user = f", acting as user {info.user_id}" if info.user_id else ""
    scopes = ",".join(info.scopes)
    return (
        f"reissued the existing token '{info.name}' with scopes {scopes}{user}; the old value no longer "
        f"works; the new value, shown once:\n{plain}"
    )


async def _token_reissue(database: Database, args: argparse.Namespace) -> str:
    info, plain = await TokenStore(database).reissue(args.name)
    return f"reissued token '{info.name}'; the old value no longer works; the new value, shown once:\n{plain}"


def _token_switch(action: str) -> Handler:
    async def switch(database: Database, args: argparse.Namespace) -> str:
        await getattr(TokenStore(database), action)(args.name)
        return f"{action}d token '{args.name}'"

    return switch


async def _token_list(database: Database, args: argparse.Namespace) -> str:
    tokens = await TokenStore(database).list()
    if args.json:
        return orjson.dumps([token.as_dict() for token in tokens], option=orjson.OPT_INDENT_2).decode()
    return "\n".join(_token_line(token) for token in tokens) if tokens else "no tokens"


def _token_line(token: TokenInfo) -> str:
    expiry = token.expires_at.isoformat() if token.expires_at else "never"
    if token.is_expired():
        expiry += " (expired)"
    user = f" user={token.user_id}" if token.user_id else ""
    return f"{token.name}\t{token.prefix}…\t{','.join(token.scopes)}\t{token.state()}\texpires={expiry}{user}"


async def _settings_get(database: Database, args: argparse.Namespace) -> str:
    value = await SettingsStore(database).get(args.key)
    if value is None and args.key in DEFAULT_SETTINGS:
        return DEFAULT_SETTINGS[args.key]  # never stored (or unset): the default is what applies
    if value is None:
        known = ", ".join(sorted(DEFAULT_SETTINGS))
        raise CommandError(f"no setting '{args.key}' is stored, and there is no such setting ({known})")
    return value


async def _settings_set(database: Database, args: argparse.Namespace) -> str:
    value = checked_setting(args.key, args.value)
    await SettingsStore(database).set(args.key, value)
    return f"{args.key} = {value}"


async def _settings_unset(database: Database, args: argparse.Namespace) -> str:
    store = SettingsStore(database)
    if await store.get(args.key) is None:
        raise CommandError(f"no setting '{args.key}' is stored")
    await store.delete(args.key)
    return f"removed {args.key}; its built-in default applies"


async def _settings_list(database: Database, args: argparse.Namespace) -> str:
    values = await SettingsStore(database).all()
    if args.json:
        return orjson.dumps(values, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    return "\n".join(f"{key} = {value}" for key, value in sorted(values.items()))


async def _openapi(database: Database, args: argparse.Namespace) -> str:
    from pb_headless.openapi import full_document

    api = await site_api(database, args, purpose="openapi")
    assert api is not None
    # The registry alone: no schema check, no change-log triggers, no webhook worker (HeadlessAPI.startup
    # is a serving instance's), so a console command changes nothing in the site's database.
    try:
        if not (await api.snapshot()).catalog and not api.routes:
            raise CommandError(NOTHING_TO_DOCUMENT)
        if getattr(args, "folder_warning", None):
            warn(args.folder_warning)
        document = full_document(api, args.server.rstrip("/") + api.prefix)
    finally:
        await api.shutdown()
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


NOTHING_TO_DOCUMENT = (
    "found no API to document here: pass --app MODULE:ATTRIBUTE naming the ASGI app your host runs "
    "(e.g. --app app:app), or --api-file with your declaration file (docs/console-script.md)"
)


COMMANDS: dict[tuple[str, str | None], Handler] = {
    ("install", None): _install,
    ("migrate", None): migrate.migrate,
    ("migrate", "status"): migrate.status,
    ("token", "create"): _token_create,
    ("token", "reissue"): _token_reissue,
    ("token", "disable"): _token_switch("disable"),
    ("token", "enable"): _token_switch("enable"),
    ("token", "delete"): _token_switch("delete"),
    ("token", "list"): _token_list,
    ("settings", "get"): _settings_get,
    ("settings", "set"): _settings_set,
    ("settings", "unset"): _settings_unset,
    ("settings", "list"): _settings_list,
    ("openapi", None): _openapi,
    **WEBHOOK_COMMANDS,
}
