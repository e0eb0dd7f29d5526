"""A real uvicorn server in a child process, for tests that need real sockets and concurrency."""

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

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running_server(app: str, env: dict[str, str], *, workers: int = 1, timeout: float = 30.0) -> Iterator[str]:
    """Serve `module:attribute` on a free loopback port; yields the base URL and always stops it."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
               "--log-level", "warning", "--workers", str(workers)]
    process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base, process, timeout)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _wait_until_up(base: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read().decode(errors="replace") if process.stdout else ""
            raise RuntimeError(f"the server exited early:\n{output}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base + "/api/pb/v1/health", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the server at {base} did not answer within {timeout} s")
