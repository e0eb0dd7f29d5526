"""Database freezes for the soak: the cluster's PostgreSQL stopped with SIGSTOP for a few seconds at a
fixed interval, as a stalled host or a paused VM would stop it, then let go with SIGCONT.

The postmaster is stopped first, so that no backend is forked after the list of them was read. A
request that was under way while the database was frozen may answer 503; one sent after a thaw must
get its usual answer (docs/deployment.md, "Soak").
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import subprocess
import time
from pathlib import Path


def _pids(data: Path) -> list[int]:
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(postmaster)], capture_output=True, text=True, check=False
    ).stdout.split()
    return [postmaster, *(int(pid) for pid in children)]


def _signal(pids: list[int], number: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # a backend that just ended
            os.kill(pid, number)


class Freezer:
    """Freezes the PostgreSQL of data directory `data` for `length` seconds every `every` seconds."""

    def __init__(self, data: Path, every: float, length: float) -> None:
        self.data, self.every, self.length = data, every, length
        self.windows: list[tuple[float, float]] = []  # (frozen at, thawed at), time.monotonic()

    async def run(self, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.every - self.length)
                if stop.is_set():
                    return
                await self._freeze_once()
        finally:
            self.thaw()

    async def _freeze_once(self) -> None:
        postmaster = _pids(self.data)[0]
        os.kill(postmaster, signal.SIGSTOP)
        frozen = _pids(self.data)
        _signal(frozen[1:], signal.SIGSTOP)
        self.windows.append((time.monotonic(), math.inf))
        print(f"           PostgreSQL frozen for {self.length:.0f} s", flush=True)
        try:
            await asyncio.sleep(self.length)
        finally:
            _signal(list(reversed(frozen)), signal.SIGCONT)
            self.windows[-1] = (self.windows[-1][0], time.monotonic())

    def thaw(self) -> None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            _signal(_pids(self.data), signal.SIGCONT)

    def overlaps(self, began: float, ended: float) -> bool:
        """Whether a request sent at `began` and answered at `ended` was under way during a freeze."""
        return any(began < thawed and ended > frozen for frozen, thawed in self.windows)
