"""`init`: the library's tables, the site's own tables, the site folder's content tables and demo rows.

Every step is idempotent: tables are created only when missing and demo rows go only into empty tables.
"""

from __future__ import annotations

import contextlib
import secrets
import warnings

import sqlalchemy as sa
from databases import Database

from examples.site.schema import create_tables, metadata, site_settings, table_exists
from examples.site.site_folder import SiteFolder
from pb_headless import install

SECRET_KEY = "session_secret"


async def initialise(database: Database, folder: SiteFolder) -> list[str]:
    """Install everything; returns one line per thing done, for the console."""
    done = []
    with warnings.catch_warnings():
        # MariaDB's driver warns "Table ... already exists" each time install() runs again.
        warnings.filterwarnings("ignore", message=r".*already exists", category=Warning)
        await install(database)
    await create_tables(database, metadata)
    if folder.create_api_file():
        done.append(f"created {folder.api_file}, a starting declaration file that publishes nothing yet")
    done.extend(await _create_content_tables(database, folder))
    for table, rows in folder.seed_rows():
        if rows and not await database.fetch_val(sa.select(sa.func.count()).select_from(table)):
            for row in rows:
                await database.execute(table.insert().values(**row))
            await _catch_up_sequence(database, table)
            done.append(f"added {len(rows)} demo rows to {table.name}")
    await session_secret(database)
    return done


async def _create_content_tables(database: Database, folder: SiteFolder) -> list[str]:
    """The tables of `core/App/models.py`, whatever it calls its MetaData or declarative base."""
    models = folder.app_dir / "models.py"
    if not models.is_file():
        return []
    found = folder.content_metadata()
    if not found:
        return [
            f"{models} defines no tables: looked for a module-level sqlalchemy MetaData, Table, or "
            "declarative base (a class with .metadata, e.g. class Base(DeclarativeBase)); created none"
        ]
    for content in found:
        await create_tables(database, content)
    return []


async def is_initialised(database: Database) -> bool:
    return await table_exists(database, "pb_state") and await table_exists(database, site_settings.name)


async def session_secret(database: Database) -> str:
    """The key that signs session cookies: made once and kept in the database, so instances share it."""
    query = sa.select(site_settings.c.value).where(site_settings.c.key == SECRET_KEY)
    secret = await database.fetch_val(query)
    if secret:
        return str(secret)
    with contextlib.suppress(Exception):  # another instance stored one first; use that
        await database.execute(site_settings.insert().values(key=SECRET_KEY, value=secrets.token_urlsafe(48)))
    return str(await database.fetch_val(query))


async def _catch_up_sequence(database: Database, table: sa.Table) -> None:
    """Rows seeded with explicit ids leave PostgreSQL's sequence behind; move it past them."""
    if database.url.dialect != "postgresql" or "id" not in table.c:
        return
    await database.execute(
        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), (SELECT MAX(id) FROM {table.name}))"
    )
