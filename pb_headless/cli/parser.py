"""The command line of `pb-headless`: every command, argument and its help text (argparse only)."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from pb_headless.cli.webhook_parser import add_webhook_commands

PROGRAM = "pb-headless"
# The system settings, for `settings --help` (pb_headless.tables.DEFAULT_SETTINGS holds their defaults;
# tests/cli/test_console_texts.py checks that the help names each: tables.py loads SQLAlchemy, this module
# only argparse).
SETTINGS = (
    "service_cors_origins",
    "service_cors_paths",
    "service_cors_methods",
    "service_cors_headers",
    "service_cors_credentials",
    "service_cors_max_age",
    "service_webhooks_allow_private",
    "service_changes_retention_days",
)
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
        metavar="MODULE:ATTRIBUTE",
        default=default,
        help="the site, as uvicorn names an app: the ASGI app the host runs (e.g. app:app), its "
        "HeadlessAPI, or a console hook (a callable taking the database and returning the HeadlessAPI); "
        "then openapi prints what the site serves, token create --user checks the id and webhooks check "
        "object names (default: $PB_APP)",
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
                "Read and change the system settings: " + ", ".join(SETTINGS) + ". Values are checked as "
                "the administration area checks them; changes take effect without a restart, on every "
                "instance (docs/console-script.md#settings)."
            ),
        ),
        command,
    )
    _migrate_command(command(commands, "migrate", MIGRATE_HELP))
    add_webhook_commands(commands, command, Parser, add_name)
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
    create.add_argument(
        "--reissue-if-exists",
        action="store_true",
        help="when a token of that name exists, give it these settings and a new value instead of refusing",
    )
    create.add_argument(
        "--unchecked-user",
        action="store_true",
        help="accept --user without asking the host (for a host that has no user loader)",
    )
    for name, text in (
        ("reissue", "give a token a new plain value (printed once, last line); the old one stops working"),
        ("disable", "stop a token from working, keeping it"),
        ("enable", "let a disabled token work again"),
        ("delete", "delete a token for good"),
    ):
        add_name(command(actions, name, text), "the token's name")
    lister = command(actions, "list", "list tokens: name, prefix, scopes, state, expiry, user")
    lister.add_argument("--json", action="store_true", help="print a JSON array instead of lines")


def _settings_commands(settings: argparse.ArgumentParser, command) -> None:
    actions = settings.add_subparsers(dest="action", required=True, metavar="action", parser_class=Parser)
    getter = command(actions, "get", "print a setting's value (its built-in default when none is stored)")
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


def add_name(action: argparse.ArgumentParser, text: str) -> None:
    """`token disable N` and `token disable --name N` alike, as `create --name N` takes it: every
    command that acts on a named token or webhook takes the name either way (settle_name)."""
    action.add_argument("name", nargs="?", help=text)
    action.add_argument("--name", dest="name_option", metavar="NAME", help="the same, as an option")


def settle_name(args: argparse.Namespace) -> argparse.Namespace:
    """The name of a command that acts on one token or webhook, given as an argument or as `--name`."""
    if not hasattr(args, "name_option"):
        return args
    given = {name for name in (args.name, args.name_option) if name is not None}
    if not given:
        raise UsageError(f"{args.command} {args.action} needs a name: NAME or --name NAME (see --help)")
    if len(given) > 1:
        raise UsageError(f"two names given: '{args.name}' and --name '{args.name_option}'; give one")
    args.name = given.pop()
    return args


MIGRATE_HELP = (
    "bring the library's tables to this release's version, step by step under a database lock "
    "(docs/upgrading.md); 'migrate status' shows the current and latest version and the pending steps"
)


def _migrate_command(migrate: argparse.ArgumentParser) -> None:
    migrate.add_argument("action", nargs="?", choices=["status"], help="status: show, change nothing")
    migrate.add_argument("--to", metavar="REV", help="stop at this revision, e.g. 0002 (default: the latest)")
    how = migrate.add_mutually_exclusive_group()
    how.add_argument("--dry-run", action="store_true", help="print the steps that would run; change nothing")
    how.add_argument(
        "--sql", action="store_true", help="print the SQL of the steps for a DBA to apply; change nothing"
    )
