"""The site's Jinja2 templates (public pages and its own administration pages)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from pb_headless.admin import csrf_token

TEMPLATES = Path(__file__).parent / "templates"
ADMIN_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY"}
PB_STATIC = "/mgr/pb/static"
FLASH_KEY = "site_flash"


def flash(request: Request, message: str) -> None:
    """A one-line notice (what was just done) shown on the next administration page."""
    request.session[FLASH_KEY] = message


class Templates:
    def __init__(self) -> None:
        self.env = Environment(
            loader=FileSystemLoader(TEMPLATES),
            autoescape=select_autoescape(default=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def page(
        self,
        request: Request,
        template: str,
        context: Mapping[str, Any] | None = None,
        status_code: int = 200,
    ) -> HTMLResponse:
        in_admin = "session" in request.scope
        base = {
            "admin": getattr(request.state, "admin", None),
            "csrf_token": csrf_token(request) if in_admin else "",
            "current": request.url.path,
            "pb_static": PB_STATIC,  # the administration area's one stylesheet and script
            "flash": request.session.pop(FLASH_KEY, None) if in_admin else None,
        }
        html = self.env.get_template(template).render({**base, **(context or {})})
        return HTMLResponse(html, status_code=status_code, headers=ADMIN_HEADERS if in_admin else None)
