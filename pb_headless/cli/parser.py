"""The command line of `pb-headless`: every command, argument and its help text (argparse only)."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from pb_headless.cli.webhook_parser import add_webhook_commands

PROGRAM = "pb-headless"
DESCRIPTION = (
    "Do from a shell what a host's administration area does: install the library's tables, manage "
    "API tokens and system settings, print the OpenAPI document. Each refusal is one line on stderr "
    "and a non-zero exit status."
)
EPILOG = (
    "environment: PB_DATABASE_URL (when --database is absent), PB_APP (when --app is absent), "
    "PB_SITE_DIR and PB_COMPONENTS (for openapi without a host), PB_DEBUG=1 (tracebacks). "
    "See docs/console-script.md."
)


class UsageError(Exception):
    """A command line argparse refused; exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake reported as one line instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            print(message.rstrip(), file=sys.stderr)
        raise SystemExit(status)


def _common(after_command: bool) -> argparse.ArgumentParser:
    """--database and --app, accepted before the command and after it (the last one given wins)."""
    common = argparse.ArgumentParser(add_help=False)
    default = argparse.SUPPRESS if after_command else None
    common.add_argument(
        "--database",
        metavar="URL",
        default=default,
        help="the site's database, a databases URL such as sqlite:///site.db, "
        "postgresql://user@host/name or mysql://user@host/name (default: $PB_DATABASE_URL)",
    )
    common.add_argument(
        "--app",
        metavar="MODULE:CALLABLE",
        default=default,
        help="the host's console hook: a callable that takes the database and returns the site's "
        "HeadlessAPI, so openapi prints what the site serves and token create --user checks the id "
        "(default: $PB_APP)",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    from pb_headless import __version__

    parser = Parser(prog=PROGRAM, description=DESCRIPTION, epilog=EPILOG, parents=[_common(False)])
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    after = [_common(True)]
    commands = parser.add_subparsers(dest="command", required=True, metavar="command", parser_class=Parser)

    def command(group: argparse._SubParsersAction, name: str, text: str) -> argparse.ArgumentParser:
        return group.add_parser(name, help=text, description=text, parents=after)

    command(commands, "install", "create the library's tables and default settings (safe to run again)")
    _token_commands(
        commands.add_parser(
            "token",
            help="create and manage API tokens",
            description=(
                "Create and manage API tokens. Plain values are shown once, by create and reissue; "
                "list never shows values or hashes."
            ),
        ),
        command,
    )
    _settings_commands(
        commands.add_parser(
            "settings",
            help="read and change system settings",
            description=(
                "Read and change the system settings (the service_cors_* keys). Values are checked as the "
                "administration settings page checks them; changes take effect without a restart."
            ),
        ),
        command,
    )
    add_webhook_commands(commands, command, Parser)
    openapi = command(commands, "openapi", "print the full OpenAPI document the site serves")
    openapi.add_argument(
        "--api-file",
        metavar="PATH",
        help="the declaration file, without a host hook (default: $PB_SITE_DIR/core/App/api.py)",
    )
    openapi.add_argument(
        "--server",
        metavar="URL",
        default="http://127.0.0.1:8000",
        help="the site's address, for the document's servers entry (default: %(default)s)",
    )
    return parser


def _token_commands(token: argparse.ArgumentParser, command) -> None:
    actions = token.add_subparsers(dest="action", required=True, metavar="action", parser_class=Parser)
    create = command(actions, "create", "create a token; prints its plain value, once, as the last line")
    create.add_argument("--name", required=True, help="a unique name, e.g. 'mobile app'")
    create.add_argument(
        "--scopes", required=True, help="comma-separated scopes, e.g. articles.read,news.* or *"
    )
    create.add_argument(
        "--expires-at",
        metavar="ISO",
        help="expiry, ISO 8601, e.g. 2027-01-31T12:00:00+00:00 (no offset: UTC)",
    )
    create.add_argument(
        "--user",
        metavar="ID",
        help="the acting user's id, recorded by writes; checked by the host's user loader if there is one",
    )
    for name, text in (
        ("reissue", "give a token a new plain value (printed once, last line); the old one stops working"),
        ("disable", "stop a token from working, keeping it"),
        ("enable", "let a disabled token work again"),
        ("delete", "delete a token for good"),
    ):
        command(actions, name, text).add_argument("name", help="the token's name")
    lister = command(actions, "list", "list tokens: name, prefix, scopes, state, expiry, user")
    lister.add_argument("--json", action="store_true", help="print a JSON array instead of lines")


def _settings_commands(settings: argparse.ArgumentParser, command) -> None:
    actions = settings.add_subparsers(dest="action", required=True, metavar="action", parser_class=Parser)
    getter = command(actions, "get", "print a setting's value")
    getter.add_argument("key", help="the setting, e.g. service_cors_origins")
    setter = command(actions, "set", "check and store a setting's value")
    setter.add_argument("key", help="the setting, e.g. service_cors_origins")
    setter.add_argument(
        "value", nargs="?", default="", help="the new value, e.g. https://app.example.com (default: empty)"
    )
    unsetter = command(actions, "unset", "remove a setting, so its built-in default applies")
    unsetter.add_argument("key", help="the setting, e.g. service_cors_max_age")
    lister = command(actions, "list", "print every stored setting")
    lister.add_argument("--json", action="store_true", help="print a JSON object instead of lines")
