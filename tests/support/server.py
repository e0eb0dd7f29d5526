"""Real processes for tests (uvicorn, redis-server): a free loopback port, a deadline, always stopped.

`running` starts a command and stops it (terminate, then kill) when the block ends, whatever the test
did; `wait_until` waits for it to be ready; `running_server` combines them for a uvicorn app.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

REPOSITORY = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def uvicorn_command(app: str, port: int, *, factory: bool = False) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uvicorn",
        app,
        *(["--factory"] if factory else []),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
    ]


@contextlib.contextmanager
def running(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` from the repository with its output in `log`; stopped when the block ends."""
    environment = {**os.environ, **env, "PYTHONPATH": str(REPOSITORY)}
    with log.open("ab") as output:
        process = subprocess.Popen(
            command, cwd=REPOSITORY, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def wait_until(
    process: subprocess.Popen[bytes], log: Path, ready: Callable[[], bool], timeout: float = START_TIMEOUT
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}:\n{log_tail(log)}")
        if ready():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{process.args[0]} did not start within {timeout:.0f} s:\n{log_tail(log)}")


def answers(url: str, *, any_status: bool = False) -> bool:
    try:
        response = httpx.get(url, timeout=1)
    except httpx.HTTPError:
        return False
    return any_status or response.status_code == 200


def log_tail(log: Path, size: int = 4000) -> str:
    return log.read_text(errors="replace")[-size:] if log.exists() else "(no log)"


@contextlib.contextmanager
def running_server(app: str, env: dict[str, str]) -> Iterator[str]:
    """Serve `module:attribute` with uvicorn on a free port; yields the base URL once health answers."""
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "uvicorn.log"
        with running(uvicorn_command(app, port), env, log) as process:
            base = f"http://127.0.0.1:{port}"
            wait_until(process, log, lambda: answers(base + "/api/pb/v1/health"))
            yield base
