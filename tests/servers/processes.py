"""Server processes for tests: uvicorn serving tests/servers/app.py, and a private redis-server.

Every process is started on a free 127.0.0.1 port, waited for with a deadline, and always stopped
(terminate, then kill) when its context ends, whatever the test did.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.servers.services import unavailable
from tests.support.server import answers, free_port, running, uvicorn_command, wait_until

__all__ = ["free_port", "redis_server", "uvicorn_servers"]


@contextlib.contextmanager
def uvicorn_servers(count: int, environment: dict[str, str], logs: Path) -> Iterator[list[str]]:
    """`count` uvicorn processes of tests.servers.app; yields their base URLs."""
    with contextlib.ExitStack() as stack:
        started = []
        for number in range(count):  # all start at once, then each is waited for
            port, log = free_port(), logs / f"uvicorn-{number}.log"
            command = uvicorn_command("tests.servers.app:app", port)
            started.append(
                (stack.enter_context(running(command, environment, log)), log, f"http://127.0.0.1:{port}")
            )
        for process, log, url in started:
            wait_until(process, log, lambda url=url: answers(url + "/ready"))
        yield [url for _, _, url in started]


@contextlib.contextmanager
def redis_server(port: int, logs: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A private redis-server on `port`, with nothing saved to disk."""
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server", "the binary is not on PATH")
    command = [
        str(binary),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(logs),
    ]
    with running(command, {}, logs / f"redis-{port}.log") as process:
        wait_until(process, logs / f"redis-{port}.log", lambda: _accepts(port))
        yield process


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False
