"""Every module under bench/ imports: a benchmark broken by a move elsewhere fails here, not on the
day someone runs it (docs/performance.md lists the commands).

bench/soak.py and its helpers are run as scripts, with bench/ itself on `sys.path`; the test imports
every module that way, which also covers those imported as `bench.<name>`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("name", sorted(path.stem for path in BENCH.glob("*.py") if path.stem != "__init__"))
def test_the_bench_module_imports(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    module = importlib.import_module(f"bench.{name}")
    assert module.__doc__, f"bench/{name}.py says what it measures in its docstring"
