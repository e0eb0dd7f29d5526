"""The migration's own connection goes to the host's database, with the async driver SQLAlchemy needs."""

from __future__ import annotations

import pytest
from databases import Database

from pb_headless.migrations.engine import engine_url


@pytest.mark.parametrize(
    ("host_url", "migration_url"),
    [
        (
            "postgresql://site:secret@db.example:5432/site",
            "postgresql+asyncpg://site:secret@db.example:5432/site",
        ),
        ("postgresql+asyncpg://site@db.example/site", "postgresql+asyncpg://site@db.example/site"),
        (
            "mysql://root@127.0.0.1:3306/site?min_size=2&max_size=8",
            "mysql+aiomysql://root@127.0.0.1:3306/site",
        ),
        ("sqlite:///site.db", "sqlite+aiosqlite:///site.db"),
        ("sqlite:////var/lib/site/site.db", "sqlite+aiosqlite:////var/lib/site/site.db"),
    ],
)
def test_the_host_url_keeps_its_server_and_credentials_and_loses_only_the_pool_options(
    host_url: str, migration_url: str
) -> None:
    assert engine_url(Database(host_url)).render_as_string(hide_password=False) == migration_url


def test_an_in_memory_sqlite_database_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="in-memory SQLite database cannot be migrated: use a database file"):
        engine_url(Database("sqlite:///:memory:"))
