"""Server processes for the OpenAPI and browser tests: a free 127.0.0.1 port, a deadline, always stopped."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

REPOSITORY = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(command: list[str], ready_url: str, log: Path, environment: dict[str, str] | None = None
            ) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` until the block ends; wait until `ready_url` answers (any status) first."""
    env = {**os.environ, **(environment or {}), "PYTHONPATH": str(REPOSITORY)}
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=REPOSITORY, env=env, stdout=output, stderr=subprocess.STDOUT)
        try:
            _wait_until_answering(process, ready_url, log)
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def uvicorn_command(app: str, port: int, *, factory: bool = False) -> list[str]:
    return [sys.executable, "-m", "uvicorn", app, *(["--factory"] if factory else []), "--host", "127.0.0.1",
            "--port", str(port), "--log-level", "warning", "--no-access-log"]


def log_tail(log: Path, size: int = 4000) -> str:
    return log.read_text(errors="replace")[-size:] if log.exists() else "(no log)"


def _wait_until_answering(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server stopped with {process.returncode}:\n{log_tail(log)}")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url}: no answer within {START_TIMEOUT:.0f} s:\n{log_tail(log)}")
