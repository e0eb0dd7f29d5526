"""What a driver's exception means for the answer: the database is unavailable (503), the client's
values conflict with a constraint (422), or something else (500).

The three drivers share no base classes, so exceptions are recognised by the names of their classes
(and, for MariaDB and SQLite, by their error codes and messages), without importing any driver.
"""

from __future__ import annotations

import sqlite3

# Integrity and data errors of asyncpg, aiomysql/pymysql, sqlite3 and SQLAlchemy.
_DATA_ERRORS = frozenset(
    {
        "IntegrityError",
        "DataError",
        "IntegrityConstraintViolationError",
        "StringDataRightTruncationError",
        "NumericValueOutOfRangeError",
        "ForeignKeyViolationError",
        "UniqueViolationError",
        "NotNullViolationError",
        "CheckViolationError",
    }
)
_UNIQUE_ERRORS = frozenset({"UniqueViolationError"})
# asyncpg: the server is starting, stopping, gone, or full; the connection broke.
_UNAVAILABLE_ERRORS = frozenset(
    {
        "CannotConnectNowError",
        "ConnectionDoesNotExistError",
        "PostgresConnectionError",
        "AdminShutdownError",
        "CrashShutdownError",
        "TooManyConnectionsError",
        "ConnectionFailureError",
        "ConnectionRejectionError",
        "ClientCannotConnectError",
    }
)
# MariaDB client codes: can't connect (2002, 2003), server gone (2006), connection lost (2013),
# too many connections (1040), server shutting down (1053), lock wait timeout (1205).
_MARIADB_UNAVAILABLE = frozenset({2002, 2003, 2006, 2013, 1040, 1053, 1205})
_MARIADB_DUPLICATE = 1062
_SQLITE_UNAVAILABLE = ("database is locked", "unable to open database", "disk i/o error")


def _class_names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def _mariadb_code(error: BaseException) -> int | None:
    args = getattr(error, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def is_unavailable(error: BaseException) -> bool:
    """The database cannot be reached or cannot serve now: answered 503 with Retry-After."""
    if isinstance(error, (ConnectionError, TimeoutError)):
        return True
    if isinstance(error, OSError) and not isinstance(error, sqlite3.Error):
        return True
    if isinstance(error, sqlite3.OperationalError):
        return any(text in str(error).lower() for text in _SQLITE_UNAVAILABLE)
    names = _class_names(error)
    if names & _UNAVAILABLE_ERRORS and "IntegrityError" not in names:
        return True
    if "InterfaceError" in names and "closed" in str(error).lower():  # a connection the server dropped
        return True
    return "OperationalError" in names and _mariadb_code(error) in _MARIADB_UNAVAILABLE


# asyncpg: the server broke a deadlock by failing this transaction; MariaDB: its number 1213.
_DEADLOCK_ERRORS = frozenset({"DeadlockDetectedError"})
_MARIADB_DEADLOCK = 1213


def is_deadlock(error: BaseException) -> bool:
    """The database chose this transaction as a deadlock's victim and rolled it back: sent again,
    it may well succeed."""
    return bool(_class_names(error) & _DEADLOCK_ERRORS) or _mariadb_code(error) == _MARIADB_DEADLOCK


def is_data_error(error: BaseException) -> bool:
    """The values broke a constraint or do not fit a column."""
    names = _class_names(error)
    # MariaDB reports a failed CHECK constraint as an OperationalError, number 4025.
    return bool(names & _DATA_ERRORS) or ("OperationalError" in names and _mariadb_code(error) == 4025)


def is_duplicate_key(error: BaseException) -> bool:
    """A unique index or primary key refused a value that is already taken."""
    names = _class_names(error)
    if names & _UNIQUE_ERRORS or _mariadb_code(error) == _MARIADB_DUPLICATE:
        return True
    return "IntegrityError" in names and "unique" in str(error).lower()


_MARIADB_STATEMENT_TIME = 1969  # max_statement_time exceeded


def is_over_budget(error: BaseException) -> bool:
    """The database stopped a statement at the time budget the library set for it (budget.py):
    SQLite interrupted, PostgreSQL's statement_timeout, MariaDB's max_statement_time."""
    if isinstance(error, sqlite3.OperationalError):
        return str(error) == "interrupted"
    if "QueryCanceledError" in _class_names(error):
        return True
    return "OperationalError" in _class_names(error) and _mariadb_code(error) == _MARIADB_STATEMENT_TIME
