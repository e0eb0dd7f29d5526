"""Server processes for the OpenAPI and browser tests: a free 127.0.0.1 port, a deadline, always stopped."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.support.server import answers, free_port, log_tail, running, uvicorn_command, wait_until

__all__ = ["free_port", "log_tail", "serving", "uvicorn_command"]


@contextlib.contextmanager
def serving(
    command: list[str], ready_url: str, log: Path, environment: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` until the block ends; wait until `ready_url` answers (any status) first."""
    with running(command, environment or {}, log) as process:
        wait_until(process, log, lambda: answers(ready_url, any_status=True))
        yield process
