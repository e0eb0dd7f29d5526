"""Signed-cookie sessions for the administration area, whose key is known only once the database answers."""

from __future__ import annotations

from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

AREA = "/mgr"
COOKIE = "pb_site_session"


class AdminSessions:
    """Sessions under /mgr only: public pages and the API never read or set the cookie.

    The key comes from `PB_SECRET_KEY` or the database (see installation.session_secret), so the
    middleware is built at startup by `configure`, not when the app is made.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.sessions: SessionMiddleware | None = None

    def configure(self, secret_key: str, *, https_only: bool = False) -> None:
        self.sessions = SessionMiddleware(
            self.app,
            secret_key=secret_key,
            session_cookie=COOKIE,
            path=AREA,
            same_site="lax",
            https_only=https_only,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        in_area = scope["type"] == "http" and (path == AREA or path.startswith(AREA + "/"))
        if not in_area:
            await self.app(scope, receive, send)
            return
        if self.sessions is None:
            raise RuntimeError("the site has not started: its session key is not known yet")
        await self.sessions(scope, receive, send)
