"""Short SQLite reads on the event loop's own thread, long ones on aiosqlite's.

aiosqlite runs every statement on a thread of its connection: two thread hand-offs per statement,
which cost more CPU than a primary-key look-up or an indexed page itself. A read outside any
transaction is first tried right here with a time budget (SQLite's progress handler interrupts it
when the budget is spent); one that needs longer, a count or a search over a large table, is run
again on the connection's thread, so the event loop is never held for more than the budget.

Safe because the connection belongs to this request while its query lock is held: aiosqlite's
thread has nothing of this connection's in flight (connections are opened with
`check_same_thread=False` for this, see pb_headless/db.py).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from typing import Any

BUDGET = 0.002  # seconds a read may hold the event loop before it moves to the connection's thread
_STEPS = 1000   # SQLite VM steps between two looks at the clock


def run_briefly(raw: Any, sql: str, arguments: Sequence[Any]) -> list[Any] | None:
    """The rows, or None when the read must run on the connection's thread instead."""
    native = getattr(raw, "_connection", None)
    if not isinstance(native, sqlite3.Connection) or native.in_transaction:
        return None
    deadline = time.perf_counter() + BUDGET
    native.set_progress_handler(lambda: time.perf_counter() > deadline, _STEPS)
    try:
        return native.execute(sql, arguments).fetchall()
    except sqlite3.OperationalError as error:
        if "interrupted" in str(error):
            return None
        raise
    except sqlite3.ProgrammingError:
        return None  # opened by the host with check_same_thread=True: only its own thread may use it
    finally:
        native.set_progress_handler(None, 0)
