"""What each command does, on one connected database; every handler returns the text to print."""

from __future__ import annotations

import argparse
import asyncio
import inspect
from collections.abc import Awaitable, Callable

import orjson
from databases import Database

from pb_headless.cli.database import connected, database_url
from pb_headless.cli.output import CommandError, warn
from pb_headless.cli.site import site_api
from pb_headless.cli.webhook_commands import WEBHOOK_COMMANDS
from pb_headless.settings import SettingsStore, checked_setting
from pb_headless.tables import install
from pb_headless.tokens import TokenInfo, TokenStore

Handler = Callable[[Database, argparse.Namespace], Awaitable[str]]


def run(args: argparse.Namespace) -> str:
    url = database_url(args.database)
    return asyncio.run(_run(url, args))


async def _run(url: str, args: argparse.Namespace) -> str:
    async with connected(url) as database:
        return await COMMANDS[(args.command, getattr(args, "action", None))](database, args)


async def _install(database: Database, args: argparse.Namespace) -> str:
    await install(database)
    return "installed the library's tables and default settings"


async def _token_create(database: Database, args: argparse.Namespace) -> str:
    if args.user is not None:
        await _check_user(database, args)
    info, plain = await TokenStore(database).create(
        args.name, args.scopes, expires_at=args.expires_at, user_id=args.user
    )
    user = f", acting as user {info.user_id}" if info.user_id else ""
    scopes = ",".join(info.scopes)
    return f"created token '{info.name}' with scopes {scopes}{user}; its value, shown once:\n{plain}"


async def _check_user(database: Database, args: argparse.Namespace) -> None:
    """A token naming a user the host does not know would answer 401 forever: ask the host first."""
    api = await site_api(database, args, purpose="check --user")
    loader = api.user_loader if api is not None else None
    if loader is None:
        warn(
            f"user id '{args.user}' is not checked: no host user loader (set PB_APP or --app to the "
            "host's console hook; see docs/console-script.md)"
        )
        return
    user = loader(args.user)
    if inspect.isawaitable(user):
        user = await user
    if user is None:
        raise CommandError(
            f"no active user with id '{args.user}': the host's user loader found none (deleted, blocked "
            "or never created)"
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
    state = "enabled" if token.enabled else "disabled"
    expiry = token.expires_at.isoformat() if token.expires_at else "never"
    user = f" user={token.user_id}" if token.user_id else ""
    return f"{token.name}\t{token.prefix}…\t{','.join(token.scopes)}\t{state}\texpires={expiry}{user}"


async def _settings_get(database: Database, args: argparse.Namespace) -> str:
    value = await SettingsStore(database).get(args.key)
    if value is None:
        raise CommandError(f"no setting '{args.key}' is stored")
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
    await api.startup()
    try:
        document = full_document(api, args.server.rstrip("/") + api.prefix)
    finally:
        await api.shutdown()
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


COMMANDS: dict[tuple[str, str | None], Handler] = {
    ("install", None): _install,
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
