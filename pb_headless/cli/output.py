"""What the console script says besides its results: refusals (one line, non-zero exit) and warnings."""

from __future__ import annotations

import sys

from pb_headless.cli.parser import PROGRAM


class CommandError(Exception):
    """A refusal: printed as one line on stderr, exit status 1."""


def warn(message: str) -> None:
    print(f"{PROGRAM}: warning: {one_line(message)}", file=sys.stderr, flush=True)


def one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return (lines[0] if lines else "failed")[:500]
