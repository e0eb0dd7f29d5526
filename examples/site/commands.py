"""The console: `python -m examples.site serve | init | admin create | admin password | quickstart`.

Configuration comes from the environment (examples/site/config.py). A refusal is one line on
stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import sys
import traceback
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from examples.site.config import SiteConfig
from examples.site.passwords import random_password

if TYPE_CHECKING:
    from databases import Database

# The database, the library and uvicorn are imported by the commands that use them, so `--help`
# and a mistyped argument answer at once.
PROGRAM = "examples.site"


class CommandError(Exception):
    """A refusal printed as one line; `code` is the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CommandError(f"{message} (see --help)", code=2)


def port_number(value: str) -> int:
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise argparse.ArgumentTypeError(f"invalid port {value!r}: a number from 1 to 65535")
    return int(value)


def worker_count(value: str) -> int:
    if not value.isdigit() or not 0 < int(value) <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"invalid worker count {value!r}: a number from 1 to {MAX_WORKERS}")
    return int(value)


MAX_WORKERS = 64
ENVIRONMENT = (
    "environment: PB_SITE_DIR (the site folder), PB_DATABASE_URL, PB_REDIS_URL, PB_TRUSTED_PROXIES, "
    "PB_COMPONENTS, PB_SECRET_KEY, PB_DOCS_VIEWER_URL, PB_DEBUG=1 (tracebacks); see docs/example-site.md"
)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=f"python -m {PROGRAM}", description="The pb_headless example site.", epilog=ENVIRONMENT
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    for name, text in (
        ("serve", "run the site with uvicorn"),
        ("quickstart", "init, make sure an admin and a demo token exist, print them, serve"),
    ):
        command = commands.add_parser(name, help=text, description=text, epilog=ENVIRONMENT)
        command.add_argument(
            "--host", default="127.0.0.1", help="the address to listen on (default: %(default)s)"
        )
        command.add_argument(
            "--port", type=port_number, default=8000, help="the port to listen on (default: %(default)s)"
        )
        if name == "serve":
            command.add_argument(
                "--workers",
                type=worker_count,
                default=1,
                help="uvicorn worker processes (default: 1); without PB_REDIS_URL each one counts rate "
                "limits on its own",
            )
    init_text = (
        "install the library's and the site's tables and the demo content; in a site folder without "
        "core/App/api.py, write a starting one"
    )
    commands.add_parser("init", help=init_text, description=init_text, epilog=ENVIRONMENT)
    admin = commands.add_parser("admin", help="administration users", description="administration users")
    admin_commands = admin.add_subparsers(dest="admin_command", required=True, metavar="action")
    create_text = "add an administration user; prints its id (the id a token names as acting user)"
    create = admin_commands.add_parser("create", help=create_text, description=create_text)
    create.add_argument("--username", required=True, help="1-100 of A-Z a-z 0-9 . _ @ -")
    create.add_argument("--password", required=True, help="at least 8 characters")
    reset = admin_commands.add_parser(
        "password",
        help="set a new password for an administration user and end their sessions",
        description="Set a new password for an administration user; their open sessions end and "
        "their failed sign-ins are forgotten. Without --password a random one is made and printed once.",
    )
    reset.add_argument("--username", required=True, help="the user whose password is reset")
    reset.add_argument("--password", help="the new password (at least 8 characters); default: a random one")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from examples.site.startup import is_debug, one_line, site_dir_of

    try:
        args = build_parser().parse_args(argv)
        config = SiteConfig.from_environment(declarations=args.command not in ("init", "quickstart"))
        return run(args, config)
    except CommandError as error:
        return refuse(str(error), error.code)
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # any other refusal (configuration, database, declaration) is one line too
        if is_debug():
            traceback.print_exc()
        return refuse(one_line(error, site_dir_of(None)), 1)


def refuse(message: str, code: int) -> int:
    first_line = message.strip().splitlines()[0] if message.strip() else "failed"
    print(f"{PROGRAM}: error: {first_line[:500]}", file=sys.stderr)
    return code


def run(args: argparse.Namespace, config: SiteConfig) -> int:
    if args.command == "init":
        for line in asyncio.run(init(config)):
            print(line)
        return 0
    if args.command == "admin" and args.admin_command == "password":
        password = args.password or random_password()
        user = asyncio.run(reset_password(config, args.username, password))
        print(f"new password for administration user '{user['username']}'; their sessions have ended")
        if not args.password:
            print(f"password (shown once): {password}")
        return 0
    if args.command == "admin":
        user = asyncio.run(create_admin(config, args.username, args.password))
        print(f"created administration user '{user['username']}'; its id (a token's acting user):")
        print(user["id"])
        return 0
    from examples.site.server import quickstart, serve  # uvicorn is needed only to serve

    if args.command == "serve":
        serve(config, args.host, args.port, workers=args.workers)
    else:
        quickstart(config, args.host, args.port)
    return 0


@contextlib.asynccontextmanager
async def connected(config: SiteConfig) -> AsyncIterator[Database]:
    from databases import Database

    database = Database(config.database_url)
    try:
        await database.connect()
    except Exception as error:
        raise CommandError(f"cannot connect to {config.database_label}: {error}") from None
    try:
        yield database
    finally:
        await database.disconnect()


async def init(config: SiteConfig) -> list[str]:
    from examples.site.installation import initialise
    from examples.site.site_folder import SiteFolder

    async with connected(config) as database:
        done = await initialise(database, SiteFolder(config.site_dir))
    return [*done, f"initialised {config.database_label} for the site in {config.site_dir}"]


async def create_admin(config: SiteConfig, username: str, password: str) -> dict[str, Any]:
    from examples.site.schema import create_tables, metadata
    from examples.site.users import UserStore

    async with connected(config) as database:
        await create_tables(database, metadata)  # the site's own tables, should `init` not have run yet
        return await UserStore(database).create(username, password)


async def reset_password(config: SiteConfig, username: str, password: str) -> dict[str, Any]:
    from examples.site.logins import LoginThrottle
    from examples.site.schema import create_tables, metadata
    from examples.site.sessions import SessionRecords
    from examples.site.users import UserStore

    async with connected(config) as database:
        await create_tables(database, metadata)
        user = await UserStore(database).set_password(username, password)
        await SessionRecords(database).end_all(user["id"])
        await LoginThrottle(database).succeeded(user["username"])
        return user


def listening_socket(host: str, port: int) -> socket.socket:
    """Bind before anything is printed, so a busy port is one line instead of a dead curl example."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as error:
        sock.close()
        reason = getattr(error, "strerror", None) or str(error)
        raise CommandError(f"cannot listen on {host}:{port}: {reason}") from None
    return sock
