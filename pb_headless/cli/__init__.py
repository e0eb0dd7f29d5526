"""The console script `pb-headless`: from a shell, what a host's administration area does.

`main` is the entry point. This package imports only `argparse` until a command runs, so
`pb-headless --help` and `--version` answer at once; see docs/console-script.md.
"""

from pb_headless.cli.main import main

__all__ = ["main"]
