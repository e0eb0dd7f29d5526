"""Running `python -m examples.site ...` as a user would: a subprocess in the repository, set up by env."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def site_env(
    site_dir: Path | None = None, database: Path | str | None = None, **extra: str
) -> dict[str, str]:
    """The environment of a command: the caller's, minus every PB_ variable, plus the given ones."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PB_")}
    if site_dir is not None:
        env["PB_SITE_DIR"] = str(site_dir)
    if database is not None:
        env["PB_DATABASE_URL"] = database if isinstance(database, str) else f"sqlite:///{database}"
    env.update(extra)
    return env


def run_site(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "examples.site", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
