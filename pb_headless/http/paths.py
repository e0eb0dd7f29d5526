"""Where a request points: the path below the server's root, and below the API's prefix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_below(path: str, prefix: str) -> bool:
    """`path` is `prefix` or lies under it: `/api/pb/v1/me` is below `/api/pb/v1`, `/api/pb/v10` is not."""
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def site_path(scope: Mapping[str, Any]) -> str:
    """The path below the server's root path (what `service_cors_paths` and the API prefix name)."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and is_below(path, root):
        return path[len(root) :] or "/"
    return path


def normalize(path: str) -> str:
    """A trailing slash addresses the same resource."""
    return path.rstrip("/") or "/"


def route_path(scope: Mapping[str, Any], prefix: str) -> str:
    """The path below the API, however the host mounted it: a Starlette `Mount` sets `root_path` to the
    mount point, a host that forwards the whole scope leaves the prefix in `path`."""
    path = site_path(scope)
    mounted_at_prefix = str(scope.get("root_path", "")).endswith(prefix)
    if not mounted_at_prefix and is_below(path, prefix):
        path = path[len(prefix) :]
    return normalize(path)
