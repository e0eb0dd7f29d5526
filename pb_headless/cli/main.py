"""`pb-headless`: parse the command line, run one command, and turn every failure into one line.

Nothing heavier than argparse is imported before a command runs (see pb_headless/__init__.py).
With PB_DEBUG=1 a failure also prints its traceback, and library log records keep theirs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pb_headless.cli.output import CommandError, one_line
from pb_headless.cli.parser import PROGRAM, UsageError, build_parser, settle_name

__all__ = ["main"]

if TYPE_CHECKING:
    import logging

DEBUG_VARIABLE = "PB_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    debug = is_debug()
    try:
        args = settle_name(build_parser().parse_args(argv))  # --help and --version end here
        _quiet_logging(debug)
        from pb_headless.cli.commands import run  # the library loads only now

        output = run(args)
        if output:
            print(output, flush=True)
        return 0
    except UsageError as error:
        return refuse(str(error), 2)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `pb-headless token list | head -1`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        if debug:
            import traceback

            traceback.print_exc()
        return refuse(explain(error), 1)


def is_debug() -> bool:
    return (os.environ.get(DEBUG_VARIABLE) or "").strip().lower() in {"1", "true", "yes", "on"}


def refuse(message: str, status: int) -> int:
    print(f"{PROGRAM}: {one_line(message)}", file=sys.stderr)
    return status


def explain(error: BaseException) -> str:
    """What the user can act on. Refusals by the library (all ValueErrors) are their own message;
    anything else comes from the database or its driver and is named by its kind."""
    if isinstance(error, CommandError | ValueError):
        return str(error)
    if isinstance(error, SyntaxError):
        return f"{error.filename}, line {error.lineno}: {type(error).__name__}: {error.msg}"
    text = one_line(str(error)) if str(error) else ""
    lowered = text.lower()
    if any(words in lowered for words in ("no such table", "does not exist", "doesn't exist")):
        return f"the library's tables are missing ({text}): run '{PROGRAM} install' first"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _one_line_formatter() -> logging.Formatter:
    import logging

    class OneLine(logging.Formatter):
        """A library log record as one warning line (the traceback only under PB_DEBUG)."""

        def format(self, record: logging.LogRecord) -> str:
            return f"{PROGRAM}: {record.levelname.lower()}: {one_line(record.getMessage())}"

    return OneLine()


def _quiet_logging(debug: bool) -> None:
    """Drivers and asyncio log tracebacks from their own threads when a connection fails
    (aiosqlite does for a file in a missing folder). Without PB_DEBUG only pb_headless's own
    warnings reach the terminal, each as one line."""
    import logging

    if debug:
        logging.basicConfig(level=logging.WARNING, format=f"{PROGRAM}: %(levelname)s %(name)s: %(message)s")
        return
    import warnings

    warnings.simplefilter("ignore")  # e.g. MariaDB's "table already exists" on a second install
    logging.getLogger().addHandler(logging.NullHandler())
    library = logging.getLogger("pb_headless")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_one_line_formatter())
    library.addHandler(handler)
    library.setLevel(logging.WARNING)
    library.propagate = False
