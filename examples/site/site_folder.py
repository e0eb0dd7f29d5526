"""The site folder (`PB_SITE_DIR`): where `core/App` lives and how its modules are imported.

`core/App/api.py` is the declaration file; `models.py` (imported as `core.App.models`, the folder
being on `sys.path`), `routes.py` (custom API routes) and `seed.py` (demo rows) are optional.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlalchemy as sa


class SiteFolder:
    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self.app_dir = self.path / "core" / "App"

    @property
    def api_file(self) -> Path:
        return self.app_dir / "api.py"

    @property
    def routes_file(self) -> Path | None:
        path = self.app_dir / "routes.py"
        return path if path.is_file() else None

    def activate(self) -> None:
        """Put the folder first on `sys.path`, forgetting a `core` package imported from another folder
        (one process may open two sites, as the tests do)."""
        loaded = sys.modules.get("core")
        if loaded is not None and not self._is_ours(loaded):
            for name in [name for name in sys.modules if name == "core" or name.startswith("core.")]:
                del sys.modules[name]
        folder = str(self.path)
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)
        importlib.invalidate_caches()

    def _is_ours(self, module: ModuleType) -> bool:
        locations = list(getattr(module, "__path__", [])) or [getattr(module, "__file__", "") or ""]
        return any(Path(location).resolve().is_relative_to(self.path) for location in locations if location)

    def module(self, name: str) -> ModuleType | None:
        """`core.App.<name>` when the folder has it, else None."""
        if not (self.app_dir / f"{name}.py").is_file():
            return None
        self.activate()
        return importlib.import_module(f"core.App.{name}")

    def metadata(self) -> sa.MetaData | None:
        models = self.module("models")
        metadata = getattr(models, "metadata", None)
        return metadata if isinstance(metadata, sa.MetaData) else None

    def table(self, name: str) -> sa.Table | None:
        metadata = self.metadata()
        return metadata.tables.get(name) if metadata is not None else None

    def seed_rows(self) -> Sequence[tuple[sa.Table, Sequence[dict[str, Any]]]]:
        """`ROWS` of `core/App/seed.py`: (table, rows) pairs, parents first."""
        seed = self.module("seed")
        return list(getattr(seed, "ROWS", ())) if seed is not None else []
