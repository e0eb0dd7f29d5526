"""Where the example site folder of docs/integrators.md lives, and how its `core` modules are forgotten."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "examples" / "integrators"


def site_module_names() -> list[str]:
    """The imported modules that belong to a site folder: `core`, everything under it, and the
    example's host module, which imports from it."""
    return [
        name
        for name in sys.modules
        if name in ("core", "examples.integrators.host") or name.startswith("core.")
    ]
