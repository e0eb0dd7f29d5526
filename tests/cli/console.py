"""Running `pb-headless` as a user would: the installed console script in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("pb-headless")
SITE_HOOK = "examples.site.console:headless_api"


def run(
    *args: str, database: str | None = None, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """`pb-headless [--database URL] ARGS` with the caller's environment minus every PB_ variable."""
    command = [str(SCRIPT), *(["--database", database] if database else []), *args]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PB_")}
    return subprocess.run(
        command, capture_output=True, text=True, env={**environment, **(env or {})}, timeout=120, cwd=cwd
    )


def assert_refused(result: subprocess.CompletedProcess[str], fragment: str = "") -> str:
    """A refusal: non-zero exit, one line on stderr naming the program, no traceback, nothing on stdout."""
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pb-headless: ")
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert fragment in lines[0], lines[0]
    return lines[0]


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]
