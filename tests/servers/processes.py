"""Server processes for tests: uvicorn serving tests/servers/app.py, and a private redis-server.

Every process is started on a free 127.0.0.1 port, waited for with a deadline, and always stopped
(terminate, then kill) when its context ends, whatever the test did.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from tests.servers.services import unavailable

REPOSITORY = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def uvicorn_servers(count: int, environment: dict[str, str], logs: Path) -> Iterator[list[str]]:
    """`count` uvicorn processes of tests.servers.app; yields their base URLs."""
    env = {**os.environ, **environment, "PYTHONPATH": str(REPOSITORY)}
    with contextlib.ExitStack() as stack:
        started = []
        for number in range(count):  # all start at once, then each is waited for
            port, log = free_port(), logs / f"uvicorn-{number}.log"
            command = [sys.executable, "-m", "uvicorn", "tests.servers.app:app", "--host", "127.0.0.1",
                       "--port", str(port), "--log-level", "warning", "--no-access-log"]
            started.append((stack.enter_context(_running(command, env, log)), log, f"http://127.0.0.1:{port}"))
        for process, log, url in started:
            _wait_until(process, log, lambda url=url: _answers(url + "/ready"))
        yield [url for _, _, url in started]


@contextlib.contextmanager
def redis_server(port: int, logs: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A private redis-server on `port`, with nothing saved to disk."""
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server", "the binary is not on PATH")
    command = [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", str(logs)]
    with _running(command, dict(os.environ), logs / f"redis-{port}.log") as process:
        _wait_until(process, logs / f"redis-{port}.log", lambda: _accepts(port))
        yield process


@contextlib.contextmanager
def _running(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as output:
        process = subprocess.Popen(command, cwd=REPOSITORY, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_until(process: subprocess.Popen[bytes], log: Path, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}:\n{_tail(log)}")
        if ready():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{process.args[0]} did not start within {START_TIMEOUT} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False
