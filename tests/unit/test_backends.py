"""One backend per host database, its facts by name and what it keeps (database/backends/)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from databases import Database

from pb_headless.api.application import HeadlessAPI
from pb_headless.database.backends import (
    MariaDBBackend,
    PostgreSQLBackend,
    SQLiteBackend,
    backend_class,
    backend_for,
)
from pb_headless.registry import ApiRegistry


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        ("sqlite", SQLiteBackend),
        ("postgresql", PostgreSQLBackend),
        ("postgres", PostgreSQLBackend),
        ("mysql", MariaDBBackend),
        ("mariadb", MariaDBBackend),
        ("oracle", None),
    ],
)
def test_each_url_scheme_names_its_backend_class(scheme: str, expected: type | None) -> None:
    assert backend_class(scheme) is expected


def test_a_database_the_library_does_not_serve_is_refused_by_name() -> None:
    class Unserved:
        class url:  # the shape of `databases`' URL that backend_for reads
            dialect = "oracle"

    with pytest.raises(ValueError, match="does not serve a oracle database"):
        backend_for(Unserved())  # type: ignore[arg-type]


def test_every_backend_says_how_its_writes_find_the_new_key() -> None:
    """A single INSERT returns its key only where RETURNING is used for it; a multi-row INSERT
    needs RETURNING for every key, which MariaDB's driver does not give."""
    assert PostgreSQLBackend.returns_inserted_key and PostgreSQLBackend.returns_inserted_keys
    assert not MariaDBBackend.returns_inserted_key and not MariaDBBackend.returns_inserted_keys
    assert not SQLiteBackend.returns_inserted_key
    assert PostgreSQLBackend.error_spoils_transaction
    assert not (SQLiteBackend.error_spoils_transaction or MariaDBBackend.error_spoils_transaction)


def test_only_sqlite_is_a_file_whose_migration_steps_are_savepoints_of_one_locked_transaction() -> None:
    assert SQLiteBackend.is_file and SQLiteBackend.migration_steps_in_savepoints
    for backend in (PostgreSQLBackend, MariaDBBackend):
        assert not backend.is_file and not backend.migration_steps_in_savepoints


async def test_the_api_object_the_token_store_and_the_handlers_share_the_backend_s_caches(
    tmp_path: Path,
) -> None:
    database = Database(f"sqlite:///{tmp_path / 'site.db'}")
    api = HeadlessAPI(database, ApiRegistry())
    backend = backend_for(database)
    assert api.backend is backend
    assert api.caches is backend.caches and api.tokens.caches is backend.caches
    assert isinstance(backend, SQLiteBackend) and backend is backend_for(database)


def test_two_databases_have_two_backends_with_state_of_their_own(tmp_path: Path) -> None:
    first = backend_for(Database(f"sqlite:///{tmp_path / 'a.db'}"))
    second = backend_for(Database(f"sqlite:///{tmp_path / 'b.db'}"))
    assert first is not second
    assert first.caches is not second.caches and first.made_indexes is not second.made_indexes
    assert isinstance(first, SQLiteBackend) and isinstance(second, SQLiteBackend)
    assert first.writers is not second.writers


def test_a_database_let_go_takes_its_backend_and_caches_with_it(tmp_path: Path) -> None:
    """A process that opens database after database (a test suite, a multi-site host) keeps no
    backend of one it no longer holds: the backend is kept on its database, in no global map."""
    database = Database(f"sqlite:///{tmp_path / 'gone.db'}")
    api = HeadlessAPI(database, ApiRegistry())
    kept_backend, kept_caches = weakref.ref(api.backend), weakref.ref(api.caches)
    assert backend_for(database) is api.backend  # every caller gets the same one
    del api, database
    gc.collect()
    assert kept_backend() is None and kept_caches() is None
