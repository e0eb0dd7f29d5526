"""Turns for the writers of several processes on one SQLite file (docs/deployment.md, "SQLite").

In one process the library's writers queue on `SQLiteBackend.writers`. Between processes (uvicorn's
workers on one file) they used to meet in SQLite's busy handler, which sleeps 1, 2, 5 … 100 ms
between tries: a writer that just lost the lock slept while the other process took it again and
again, and both processes together kept half a core busy at a few hundred writes a second. Here each
process's writer first takes an exclusive `flock` on a file beside the database (`<file>-pbwriters`),
which the kernel hands over the moment its holder lets go, then begins its transaction.

The turn is an optimisation, never what makes a write correct: SQLite's own lock still guards every
transaction, and wherever the file cannot be opened or locked the writer goes on without a turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
from collections.abc import AsyncIterator

log = logging.getLogger("pb_headless")

LOCK_FILE_SUFFIX = "-pbwriters"


class WriterTurns:
    """The turns of one SQLite file for this process. Only one writer of the process asks at a time
    (it holds `SQLiteBackend.writers`), so at most one thread ever waits in `flock`."""

    def __init__(self, database_path: str) -> None:
        self.path = database_path + LOCK_FILE_SUFFIX
        self._fd: int | None = None
        self._pid = 0
        self._unusable = False
        # A wait on a thread that its writer gave up (a cancel, the time limit): the next writer
        # takes it over; if none comes first, the lock is let go the moment the wait ends.
        self._waiting: asyncio.Future[None] | None = None
        self._given_up = False

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold this process's turn on the file around one write transaction."""
        fd = await self._take()
        try:
            yield
        finally:
            if fd is not None:
                _let_go(fd)

    async def _take(self) -> int | None:
        fd = self._descriptor()
        if fd is None:
            return None
        if self._waiting is None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                pass
            except OSError:  # the file takes no locks (a file system without them): no turns, ever
                self._unusable = True
                self.close()
                return None
            waiting = asyncio.get_running_loop().run_in_executor(None, fcntl.flock, fd, fcntl.LOCK_EX)
            waiting.add_done_callback(self._wait_ended)
            self._waiting = waiting
        waiting = self._waiting
        self._given_up = False
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            if waiting.done() and not waiting.cancelled() and waiting.exception() is None:
                self._waiting = None  # taken in the same instant the writer gave up: let it go
                _let_go(fd)
            else:
                self._given_up = True
            raise
        except OSError:
            return None  # the file went away under the wait (a close): SQLite's lock alone then
        self._waiting = None
        return fd

    def _wait_ended(self, waiting: asyncio.Future[None]) -> None:
        """Runs on the loop when a thread's `flock` returns; callbacks run in the order they were
        added, so this comes before the waiting writer resumes."""
        if self._waiting is not waiting:
            return
        if waiting.cancelled() or waiting.exception() is not None:
            self._waiting = None
        elif self._given_up:
            self._waiting = None
            if self._fd is not None:
                _let_go(self._fd)

    def _descriptor(self) -> int | None:
        if self._unusable:
            return None
        if self._fd is not None and self._pid == os.getpid():
            return self._fd
        # A forked child shares its parent's open file, and with it the parent's lock: it opens its own.
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            log.warning(
                "pb_headless: writers of several processes cannot take turns on %s (%s); "
                "they wait in SQLite's busy handler instead",
                self.path,
                error.strerror or error,
            )
            self._unusable = True
            return None
        self._pid = os.getpid()
        return self._fd

    def close(self) -> None:
        """Close the file (the pool's disconnect). A wait still on a thread ends with the close."""
        fd, self._fd = self._fd, None
        if fd is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(fd)


def _let_go(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
