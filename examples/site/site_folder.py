"""The site folder (`PB_SITE_DIR`): where `core/App` lives and how its modules are imported.

`core/App/api.py` is the declaration file; `models.py` (imported as `core.App.models`, the folder
being on `sys.path`), `routes.py` (custom API routes) and `seed.py` (demo rows) are optional.
`init` writes a starting `api.py` into a folder that has none.
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
        """The first collection of tables `models.py` defines (see `content_metadata`)."""
        found = self.content_metadata()
        return found[0] if found else None

    def content_metadata(self) -> list[sa.MetaData]:
        """Every `MetaData` that `models.py` holds at module level, under any name: a `MetaData`
        itself, a `Table`'s, or a class's `.metadata` — a declarative base (`class Base(DeclarativeBase)`,
        `Base = declarative_base()`) or a model mapped by one."""
        models = self.module("models")
        if models is None:
            return []
        found: dict[int, sa.MetaData] = {}
        for value in vars(models).values():
            metadata = value if isinstance(value, sa.MetaData) else getattr(value, "metadata", None)
            if isinstance(value, sa.MetaData | sa.Table | type) and isinstance(metadata, sa.MetaData):
                found.setdefault(id(metadata), metadata)
        return list(found.values())

    def table(self, name: str) -> sa.Table | None:
        return next((m.tables[name] for m in self.content_metadata() if name in m.tables), None)

    def create_api_file(self) -> bool:
        """Write a starting declaration file when the folder has none; True when it did."""
        if self.api_file.exists():
            return False
        self.app_dir.mkdir(parents=True, exist_ok=True)
        for package in (self.path / "core", self.app_dir):  # regular packages: no other `core` merges in
            (package / "__init__.py").touch()
        self.api_file.write_text(STARTING_API_FILE, encoding="utf-8")
        return True

    def seed_rows(self) -> Sequence[tuple[sa.Table, Sequence[dict[str, Any]]]]:
        """`ROWS` of `core/App/seed.py`: (table, rows) pairs, parents first."""
        seed = self.module("seed")
        return list(getattr(seed, "ROWS", ())) if seed is not None else []


STARTING_API_FILE = '''"""What this site publishes through its API: its declarations (docs/declarations.md).

`API` maps an object name (the {name} of /api/pb/v1/objects/{name}) to its declaration. It starts
empty; publish a table of core/App/models.py like this, then restart the site:

    from core.App.models import articles   # a Table, or a class of a declarative base

    API = {
        "articles": {
            "model": articles,
            "fields": ["title", "body"],
            "filterable": ["id", "title"],
            "sortable": ["id", "title"],
            "operations": ["list", "show"],
        },
    }
"""

API: dict = {}
'''
