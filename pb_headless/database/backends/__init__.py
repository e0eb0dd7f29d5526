"""One backend object per database: what differs between SQLite, PostgreSQL and MariaDB, by name.

Code outside `database/` asks the backend for a capability ("lock the due rows", "guard this unique
field", "which tables exist") and never compares dialect names. `base.py` says what every backend
offers; each database's answers are a module of their own, like `ratelimit/`'s backends; a fourth
database is one more module here and one more entry in `_BACKENDS` (docs/architecture.md, "The
database backend").
`backend_for` opens one per host `Database` and hands the same one to every caller (`HeadlessAPI`
opens it at start; code that is handed only the `Database`, the webhook worker and the migration
commands, finds it the same way), so the per-database state it holds is kept once.

The backend also holds what is kept per database (the caches, the implied indexes made, SQLite's
queue of writers, the server accelerator) so that nothing finds it again through a module-level map.
The backend is kept on its `Database`, not in a module-level map: a process that opens many
databases, one after the other, keeps no backend, caches or engine of one it has let go.
"""

from databases import Database

from pb_headless.database.backends.base import ASYNC_DRIVERS, Backend
from pb_headless.database.backends.mariadb import MariaDBBackend
from pb_headless.database.backends.postgresql import PostgreSQLBackend
from pb_headless.database.backends.sqlite import SQLiteBackend
from pb_headless.database.dialect import backend_name

__all__ = [
    "ASYNC_DRIVERS",
    "Backend",
    "MariaDBBackend",
    "PostgreSQLBackend",
    "SQLiteBackend",
    "backend_class",
    "backend_for",
    "backend_name",
]

_BACKENDS: dict[str, type[Backend]] = {
    "sqlite": SQLiteBackend,
    "postgresql": PostgreSQLBackend,
    "mysql": MariaDBBackend,
}


def backend_class(scheme: str) -> type[Backend] | None:
    """The backend class for a URL scheme or dialect name (its facts, without a database)."""
    name = backend_name(scheme)
    return None if name is None else _BACKENDS[name]


# The one backend of each host database is kept on the `Database` object itself, under a name of the
# library's own: it lives exactly as long as its database (the two are let go together), and no
# module-level map holds either.
_KEPT_AS = "pb_headless_backend"


def backend_for(database: Database) -> Backend:
    """The backend of the host's database, opened at the first call and the same one after."""
    kept = vars(database)  # the object's own attributes: a wrapper that forwards the rest keeps its own
    found = kept.get(_KEPT_AS)
    if found is not None:
        return found
    name = backend_name(database.url.dialect)
    if name is None:
        scheme = database.url.dialect
        raise ValueError(f"pb_headless does not serve a {scheme} database (sqlite, postgresql, mysql)")
    found = kept[_KEPT_AS] = _BACKENDS[name](database)
    return found


def backend_facts(name: str) -> type[Backend]:
    """The facts of the backend of this name, for code that has a dialect's name but no database
    (statements compiled for a named dialect)."""
    found = backend_class(name)
    if found is None:
        raise ValueError(f"pb_headless does not serve a {name} database (sqlite, postgresql, mysql)")
    return found
