"""Server-rendered administration pages for a host's admin area: API tokens, CORS settings, API tabs, docs.

Optional: needs the `admin` extra (Jinja2 and python-multipart) and the host's session middleware.
See docs/admin.md.
"""

try:
    import jinja2  # noqa: F401
    import python_multipart  # noqa: F401
except ImportError as missing:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"pb_headless.admin needs its extra: pip install 'pb_headless[admin]' ({missing.name} is missing)"
    ) from missing

from pb_headless.admin.application import AdminApp
from pb_headless.admin.csrf import csrf_token, is_valid_csrf, rotate_csrf_token
from pb_headless.admin.rendering import Layout

__all__ = ["AdminApp", "Layout", "csrf_token", "is_valid_csrf", "rotate_csrf_token"]
