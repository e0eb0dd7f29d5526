"""The Jinja2 environment of the administration pages, the host's layout they fit into, and rendering.

By default the pages use the library's own `layout.html`. A host with its own administration
area passes a `Layout`: its Jinja2 loader and the name of its layout template, which every page
here extends, so `/mgr`, `/mgr/pb/*` and the docs page share one header, navigation, sign-out and
stylesheet (docs/admin.md, "One shell").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PrefixLoader,
    StrictUndefined,
    select_autoescape,
)
from starlette.requests import Request
from starlette.responses import HTMLResponse

from pb_headless.admin.csrf import csrf_token, session_of

TEMPLATES = Path(__file__).parent / "templates"
FLASH_KEY = "pb_flash"
# Admin pages show token values and settings: never let a shared cache or the back button keep them.
PAGE_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"}


@dataclass(frozen=True)
class Layout:
    """The host's layout template, which every admin page extends.

    It must define the blocks `title`, `head` and `content`. Each page gives it `admin` (the user
    the host's guard returned), `csrf_token`, `current` (the path asked for), `pb_static` (the
    address of the library's stylesheet and script) and `title` where a page has one — see docs/admin.md.
    """

    loader: BaseLoader
    template: str


def admin_label(admin: Any) -> str:
    """How the signed-in user is named in the header, whatever shape the host's user has."""
    if isinstance(admin, Mapping):
        return str(admin.get("username") or admin.get("name") or admin.get("id") or "admin")
    return str(getattr(admin, "username", None) or getattr(admin, "name", None) or admin)


def flash(request: Request, message: str, kind: str = "ok") -> None:
    """A one-line notice shown on the next page (never a secret: the session cookie is only signed);
    `kind` is `ok` for what was done, `error` for what was refused."""
    session_of(request)[FLASH_KEY] = [kind, message]


def _flash_of(stored: Any) -> dict[str, str] | None:
    if isinstance(stored, list) and len(stored) == 2:
        return {"kind": str(stored[0]), "text": str(stored[1])}
    return {"kind": "ok", "text": str(stored)} if stored else None


class Renderer:
    """Renders the templates with what every page needs: the mount root, the CSRF token, the sections."""

    def __init__(
        self,
        sections: Sequence[tuple[str, str]],
        home_url: str | None,
        layout: Layout | None = None,
        *,
        sessionless: bool = False,
        new_table_url: str | None = None,
    ) -> None:
        # The library's templates are `pb/<name>`, so a host template never shadows one of them.
        loaders: list[BaseLoader] = [PrefixLoader({"pb": FileSystemLoader(TEMPLATES)})]
        if layout is not None:
            loaders.append(layout.loader)
        self.env = Environment(
            loader=ChoiceLoader(loaders),
            autoescape=select_autoescape(default=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.sections = tuple(sections)
        self.home_url = home_url
        self.layout = layout.template if layout is not None else "pb/layout.html"
        # The docs page alone may be served by a host without sessions (it has no form).
        self.sessionless = sessionless
        self.new_table_url = new_table_url

    def page(
        self,
        request: Request,
        template: str,
        context: Mapping[str, Any] | None = None,
        status_code: int = 200,
    ) -> HTMLResponse:
        html = self.env.get_template(f"pb/{template}").render({**self.base(request), **(context or {})})
        return HTMLResponse(html, status_code=status_code, headers=PAGE_HEADERS)

    def base(self, request: Request) -> dict[str, Any]:
        """What every page and the layout read."""
        admin = getattr(request.state, "admin", None)
        root = request.scope.get("root_path", "").rstrip("/")
        session = {} if self.sessionless and "session" not in request.scope else session_of(request)
        return {
            "layout": self.layout,
            "root": root,
            "pb_static": f"{root}/static",
            "csrf_token": csrf_token(request) if "session" in request.scope else "",
            "sections": self.sections,
            "home_url": self.home_url,
            "new_table_url": self.new_table_url,
            "admin": admin,
            "admin_name": admin_label(admin) if admin is not None else None,
            "flash": _flash_of(session.pop(FLASH_KEY, None)),
            "current": request.url.path,
        }

    def error(self, request: Request, status_code: int, title: str, message: str) -> HTMLResponse:
        return self.page(request, "error.html", {"title": title, "message": message}, status_code)
