"""Sessions of the administration area: signed cookies under /mgr, each naming a server-side record."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from databases import Database
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from examples.site.schema import admin_sessions

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


SESSION_DAYS = 14  # as long as the signed cookie itself lives (SessionMiddleware's default max_age)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class SessionRecords:
    """Server-side records of signed-in sessions: the cookie holds a random key, the database its hash.

    A session is valid only while its row exists, so logging out (or a password reset) ends it for
    good on every instance, even for a copy of the cookie taken before.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    async def start(self, user_id: str) -> str:
        key = secrets.token_urlsafe(32)
        now = datetime.now(UTC).replace(tzinfo=None)
        await self.database.execute(
            admin_sessions.insert().values(key_hash=_hash(key), user_id=int(user_id), created_at=now)
        )
        return key

    async def user_id(self, key: object) -> str | None:
        """The user of a live session key, or None (unknown, ended or older than SESSION_DAYS)."""
        if not isinstance(key, str) or not key or len(key) > 100:
            return None
        oldest = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=SESSION_DAYS)
        query = sa.select(admin_sessions.c.user_id).where(
            admin_sessions.c.key_hash == _hash(key), admin_sessions.c.created_at > oldest
        )
        found = await self.database.fetch_val(query)
        return None if found is None else str(found)

    async def end(self, key: object) -> None:
        if isinstance(key, str) and key:
            await self.database.execute(
                admin_sessions.delete().where(admin_sessions.c.key_hash == _hash(key))
            )

    async def end_all(self, user_id: str) -> None:
        """Every session of one user (after a password reset)."""
        await self.database.execute(admin_sessions.delete().where(admin_sessions.c.user_id == int(user_id)))
