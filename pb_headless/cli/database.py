"""The database a command works on: its URL checked before connecting, and connected once."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from databases import Database

from pb_headless.cli.output import CommandError
from pb_headless.cli.parser import PROGRAM
from pb_headless.database.backends import backend_class

# The URL schemes a command takes (MariaDB's own `mariadb://` is for hosts' code, not the console).
SCHEMES = ("sqlite", "postgresql", "postgres", "mysql")


def database_url(given: str | None, *, creating: bool = False) -> str:
    """The checked URL; a SQLite file must exist unless the command is the one that creates it."""
    url = (given or os.environ.get("PB_DATABASE_URL") or "").strip()
    if not url:
        raise CommandError("no database: pass --database URL or set PB_DATABASE_URL")
    scheme = url.split("://", 1)[0] if "://" in url else ""
    backend = backend_class(scheme.split("+", 1)[0])
    if scheme.split("+", 1)[0] not in SCHEMES or backend is None:
        raise CommandError(
            f"unsupported database URL {scheme or url!r}: use sqlite:///path, postgresql://… or mysql://…"
        )
    if backend.is_file:
        _check_sqlite_file(url, creating)
    return url


def _check_sqlite_file(url: str, creating: bool) -> None:
    """aiosqlite reports a file in a missing folder only from its worker thread, as a traceback; and
    SQLite creates a missing file on connect, so a mistyped path would become an empty database."""
    path = url.split("://", 1)[1].removeprefix("/").split("?", 1)[0]
    if not path or path == ":memory:":
        raise CommandError(f"{url!r} names no database file: use sqlite:///path/to/site.db")
    folder = Path(path).parent
    if not folder.is_dir():
        raise CommandError(f"the folder {folder} of the database file does not exist")
    if Path(path).is_dir():
        raise CommandError(f"{path} is a folder, not a database file")
    if not creating and not Path(path).exists():
        raise CommandError(
            f"there is no database file {path} (in {Path.cwd()}): check the path; "
            f"'{PROGRAM} install' (or '{PROGRAM} migrate') creates a new one"
        )


def label(url: str) -> str:
    """The URL as messages show it: never a password."""
    scheme, _, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if at and ":" in credentials:
        return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"
    return url


@contextlib.asynccontextmanager
async def connected(url: str) -> AsyncIterator[Database]:
    try:
        database = Database(url)
    except (ImportError, ModuleNotFoundError) as error:
        backend = backend_class(url.split("://", 1)[0].split("+", 1)[0])
        extra = backend.name if backend is not None else "sqlite"  # the pip extra is the backend's name
        raise CommandError(
            f"the driver for {label(url)} is not installed ({error}): pip install 'pb_headless[{extra}]'"
        ) from None
    try:
        await database.connect()
    except Exception as error:
        raise CommandError(f"cannot connect to {label(url)}: {type(error).__name__}: {error}") from None
    try:
        yield database
    finally:
        await database.disconnect()
