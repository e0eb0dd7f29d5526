"""Where the shared comparison kit lives (Directus peer, floor server, row generator) and what it holds.

The kit is not part of this repository: it sits beside the clone, in `../shared/bench` (the
checkout's parent or grandparent directory), or wherever `PB_BENCH_KIT` points.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

PROJECT = Path(__file__).resolve().parent.parent


class KitMissing(RuntimeError):
    pass


def kit_dir() -> Path:
    candidates = []
    if os.environ.get("PB_BENCH_KIT"):
        candidates.append(Path(os.environ["PB_BENCH_KIT"]))
    candidates += [PROJECT.parent / "shared" / "bench", PROJECT.parent.parent / "shared" / "bench"]
    for candidate in candidates:
        if (candidate / "peer-directus" / "gen_articles.py").is_file():
            return candidate.resolve()
    tried = "\n  ".join(str(path) for path in candidates)
    raise KitMissing(
        "the comparison kit (Directus peer, floor server, row generator) was not found; looked in:\n  "
        f"{tried}\nPut it at ../shared/bench beside the clone, or set PB_BENCH_KIT to its directory."
    )


def generator() -> ModuleType:
    """The kit's `gen_articles` module: the same rows (seed 42) for every system."""
    path = kit_dir() / "peer-directus" / "gen_articles.py"
    spec = importlib.util.spec_from_file_location("gen_articles", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
