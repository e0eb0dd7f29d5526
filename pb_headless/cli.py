"""`pb-headless`: from a shell, what a host's administration area does (install, tokens, settings, openapi).

Every refusal is one line on stderr and a non-zero exit; list commands take `--json`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson
from databases import Database

from pb_headless.registry import ApiRegistry, DeclarationError
from pb_headless.settings import SettingsStore
from pb_headless.tables import install
from pb_headless.tokens import TokenError, TokenInfo, TokenStore


class CommandError(Exception):
    """A refusal: printed as one line, exit status 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"pb-headless: {message} (see pb-headless --help)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pb-headless", description=__doc__)
    parser.add_argument("--database", help="a databases URL (default: $PB_DATABASE_URL)")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("install", help="create the library's tables and default settings (idempotent)")

    token = commands.add_parser("token", help="API tokens").add_subparsers(
        dest="action", required=True, parser_class=_Parser
    )
    create = token.add_parser("create", help="create a token; prints the plain value as the last line")
    create.add_argument("--name", required=True)
    create.add_argument("--scopes", required=True, help="comma-separated, e.g. articles.read,news.*")
    create.add_argument("--expires-at", help="ISO 8601; without an offset it is UTC")
    create.add_argument("--user", help="the acting user's id")
    for action in ("reissue", "disable", "enable", "delete"):
        token.add_parser(action, help=f"{action} a token").add_argument("name")
    token.add_parser("list", help="list tokens (never plain values or hashes)").add_argument(
        "--json", action="store_true"
    )

    settings = commands.add_parser("settings", help="system settings").add_subparsers(
        dest="action", required=True, parser_class=_Parser
    )
    settings.add_parser("get").add_argument("key")
    setter = settings.add_parser("set")
    setter.add_argument("key")
    setter.add_argument("value", nargs="?", default="")
    settings.add_parser("list").add_argument("--json", action="store_true")

    openapi = commands.add_parser("openapi", help="print the full OpenAPI document")
    openapi.add_argument(
        "--api-file", help="the site's declaration file (default: $PB_SITE_DIR/core/App/api.py)"
    )
    openapi.add_argument("--server", default="http://localhost:8000", help="the site's base address")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    url = args.database or os.environ.get("PB_DATABASE_URL")
    if not url:
        return _refuse("no database: pass --database URL or set PB_DATABASE_URL")
    try:
        database = Database(url)
    except Exception:
        return _refuse(
            f"unsupported database URL {url.split(':', 1)[0]!r}: use sqlite://, postgresql:// or mysql://"
        )
    try:
        output = asyncio.run(_run(database, args))
    except (CommandError, TokenError, DeclarationError) as error:
        return _refuse(str(error))
    except Exception as error:  # the database refused, or is not there: one line, no traceback
        return _refuse(_explain(error))
    if output:
        print(output)
    return 0


def _explain(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    if any(words in text.lower() for words in ("no such table", "does not exist", "doesn't exist")):
        return f"the library's tables are missing ({text}): run 'pb-headless install' first"
    return f"{type(error).__name__}: {text}"


def _refuse(message: str) -> int:
    print(f"pb-headless: {message}", file=sys.stderr)
    return 1


async def _run(database: Database, args: argparse.Namespace) -> str:
    await database.connect()
    try:
        if args.command == "install":
            await install(database)
            return "installed"
        handler = COMMANDS[(args.command, getattr(args, "action", None))]
        return await handler(database, args)
    finally:
        await database.disconnect()


async def _token_create(database: Database, args: argparse.Namespace) -> str:
    info, plain = await TokenStore(database).create(
        args.name, args.scopes, expires_at=args.expires_at, user_id=args.user
    )
    return f"created token '{info.name}' with scopes {','.join(info.scopes)}; its value, shown once:\n{plain}"


async def _token_reissue(database: Database, args: argparse.Namespace) -> str:
    info, plain = await TokenStore(database).reissue(args.name)
    return f"reissued token '{info.name}'; the old value no longer works; the new value, shown once:\n{plain}"


def _token_switch(action: str) -> Callable[[Database, argparse.Namespace], Awaitable[str]]:
    async def switch(database: Database, args: argparse.Namespace) -> str:
        store = TokenStore(database)
        if action == "delete":
            await store.delete(args.name)
        else:
            await getattr(store, action)(args.name)
        return f"{action}d token '{args.name}'"

    return switch


async def _token_list(database: Database, args: argparse.Namespace) -> str:
    tokens = await TokenStore(database).list()
    if args.json:
        return orjson.dumps([token.as_dict() for token in tokens], option=orjson.OPT_INDENT_2).decode()
    if not tokens:
        return "no tokens"
    return "\n".join(_token_line(token) for token in tokens)


def _token_line(token: TokenInfo) -> str:
    state = "enabled" if token.enabled else "disabled"
    expiry = token.expires_at.isoformat() if token.expires_at else "never"
    user = f" user={token.user_id}" if token.user_id else ""
    return f"{token.name}\t{token.prefix}…\t{','.join(token.scopes)}\t{state}\texpires={expiry}{user}"


async def _settings_get(database: Database, args: argparse.Namespace) -> str:
    value = await SettingsStore(database).get(args.key)
    if value is None:
        raise CommandError(f"no setting '{args.key}'")
    return value


async def _settings_set(database: Database, args: argparse.Namespace) -> str:
    await SettingsStore(database).set(args.key, args.value)
    return f"{args.key} = {args.value}"


async def _settings_list(database: Database, args: argparse.Namespace) -> str:
    values = await SettingsStore(database).all()
    if args.json:
        return orjson.dumps(values, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    return "\n".join(f"{key} = {value}" for key, value in sorted(values.items()))


async def _openapi(database: Database, args: argparse.Namespace) -> str:
    from pb_headless.api import HeadlessAPI
    from pb_headless.openapi import full_document

    registry = ApiRegistry()
    api_file = args.api_file or _site_file("api.py")
    if api_file:
        registry.load_file(api_file)
    routes_file = _site_file("routes.py")
    api = HeadlessAPI(database, registry, routes=[routes_file] if routes_file else [])
    await api.startup()
    document: dict[str, Any] = full_document(api, args.server.rstrip("/") + api.prefix)
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def _site_file(name: str) -> str | None:
    """A file of the site folder ($PB_SITE_DIR/core/App/<name>), when there is one."""
    site = os.environ.get("PB_SITE_DIR")
    if not site:
        return None
    candidate = Path(site) / "core" / "App" / name
    if str(Path(site)) not in sys.path:
        sys.path.insert(0, str(Path(site)))  # so the file's `from core.App.models import ...` resolves
    return str(candidate) if candidate.exists() else None


COMMANDS: dict[tuple[str, str | None], Callable[[Database, argparse.Namespace], Awaitable[str]]] = {
    ("token", "create"): _token_create,
    ("token", "reissue"): _token_reissue,
    ("token", "disable"): _token_switch("disable"),
    ("token", "enable"): _token_switch("enable"),
    ("token", "delete"): _token_switch("delete"),
    ("token", "list"): _token_list,
    ("settings", "get"): _settings_get,
    ("settings", "set"): _settings_set,
    ("settings", "list"): _settings_list,
    ("openapi", None): _openapi,
}

if __name__ == "__main__":
    raise SystemExit(main())
