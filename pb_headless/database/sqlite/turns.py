"""Turns on aiosqlite's threads: at most `THREAD_READS` reads of one SQLite database at a time per
process (docs/performance.md, "Tails").

Every request's connection has its own thread, and a read that is not done on the loop's thread (a
search page, a count, a read refused there) runs on it. Eight such reads at once (wrk's sixteen
connections on two workers) ran on eight threads that each take Python's lock once per row, against
each other and against the loop: a search cost 1.3 to 1.9 times the CPU it costs in turns, and its
p99 came to about three times its p50. In turns, one statement runs in SQLite while another's rows
are converted, and reads wait in the order they came; more turns than that only contend.

A read inside a transaction of its task's own takes no turn: its connection may hold the write lock
that a read holding a turn waits for.
"""

from __future__ import annotations

import asyncio

THREAD_READS = 2  # reads of one database on threads at once, per process


class ThreadTurns:
    """The turns of one database, for the event loop that runs it (a new loop gets new turns)."""

    def __init__(self, width: int = THREAD_READS) -> None:
        self.width = width
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turns = asyncio.Semaphore(width)

    def turn(self) -> asyncio.Semaphore:
        """What a read holds while it runs on a thread (`async with`): first come, first served."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._turns = loop, asyncio.Semaphore(self.width)
        return self._turns
