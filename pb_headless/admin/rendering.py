"""The Jinja2 environment of the administration pages and the one way a page is rendered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from pb_headless.admin.csrf import csrf_token, session_of

TEMPLATES = Path(__file__).parent / "templates"
FLASH_KEY = "pb_flash"
# Admin pages show token values and settings: never let a shared cache or the back button keep them.
PAGE_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"}


def admin_label(admin: Any) -> str:
    """How the signed-in user is named in the header, whatever shape the host's user has."""
    if isinstance(admin, Mapping):
        return str(admin.get("username") or admin.get("name") or admin.get("id") or "admin")
    return str(getattr(admin, "username", None) or getattr(admin, "name", None) or admin)


def flash(request: Request, message: str) -> None:
    """A one-line notice shown on the next page (never a secret: the session cookie is only signed)."""
    session_of(request)[FLASH_KEY] = message


class Renderer:
    """Renders the templates with what every page needs: the mount root, the CSRF token, the sections."""

    def __init__(self, sections: Sequence[tuple[str, str]], home_url: str | None) -> None:
        self.env = Environment(
            loader=FileSystemLoader(TEMPLATES),
            autoescape=select_autoescape(default=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.sections = tuple(sections)
        self.home_url = home_url

    def page(
        self,
        request: Request,
        template: str,
        context: Mapping[str, Any] | None = None,
        status_code: int = 200,
    ) -> HTMLResponse:
        admin = getattr(request.state, "admin", None)
        base = {
            "root": request.scope.get("root_path", "").rstrip("/"),
            "csrf_token": csrf_token(request),
            "sections": self.sections,
            "home_url": self.home_url,
            "admin_name": admin_label(admin) if admin is not None else None,
            "flash": session_of(request).pop(FLASH_KEY, None),
            "current": request.url.path,
        }
        html = self.env.get_template(template).render({**base, **(context or {})})
        return HTMLResponse(html, status_code=status_code, headers=PAGE_HEADERS)

    def error(self, request: Request, status_code: int, title: str, message: str) -> HTMLResponse:
        return self.page(request, "error.html", {"title": title, "message": message}, status_code)
