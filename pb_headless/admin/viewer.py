"""Where the docs page takes Swagger UI's files from: a CDN, an address the host gives, or the site itself.

The site itself serves them when the `viewer` extra is installed (`pip install 'pb_headless[viewer]'`
brings the PyPI package `swagger-ui-py`, which ships swagger-ui-dist 5's files), so the page works
without the internet. Nothing of the package is imported: only its `static` folder is read.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

# swagger-ui-dist, major version 5 (the first to read OpenAPI 3.1), from a public CDN.
SWAGGER_UI_CDN = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5"
INSTALL = "pip install 'pb_headless[viewer]'"
LOCAL_PATH = "/viewer"  # under the administration area, next to /docs
_PACKAGE = "swagger_ui"  # the import name of swagger-ui-py


def installed_files() -> Path | None:
    """The folder holding `swagger-ui-bundle.js` and `swagger-ui.css`, when the extra is installed."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "static"
    return folder if (folder / "swagger-ui-bundle.js").is_file() else None


@dataclass(frozen=True)
class Viewer:
    """`files` set: served from the site under LOCAL_PATH; else loaded from `url`."""

    url: str
    files: Path | None
    chosen: bool  # the host named the source (an address, or local_viewer=True/False)

    @classmethod
    def choose(cls, viewer_url: str | None, local_viewer: bool | None) -> Viewer:
        """An address given wins; `local_viewer=None` serves the files when they are installed."""
        if viewer_url:
            return cls(viewer_url.rstrip("/"), None, True)
        files = installed_files() if local_viewer is not False else None
        if local_viewer and files is None:
            raise ImportError(f"local_viewer=True needs Swagger UI's files: {INSTALL}")
        return cls(SWAGGER_UI_CDN, files, local_viewer is not None)

    def address(self, root: str) -> str:
        """The files' base address as the page loads them (`root` is where the admin area is mounted)."""
        return f"{root}{LOCAL_PATH}" if self.files else self.url

    def remedy(self) -> str:
        """The fallback page's one line on how to make the page work without the internet."""
        if not self.chosen:
            return f"run {INSTALL} in the site's environment and restart the site"
        return (
            f"run {INSTALL} in the site's environment and create AdminApp without viewer_url, "
            "with local_viewer=True"
        )
