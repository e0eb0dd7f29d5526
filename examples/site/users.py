"""Administration users: made from the console, signed in at /mgr/login, named by tokens as acting users."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from databases import Database

from examples.site.passwords import MIN_LENGTH, hash_password, verify_password
from examples.site.schema import users

MAX_ID = 2**31 - 1
USERNAME = re.compile(r"[A-Za-z0-9_.@-]{1,100}")


class UserError(ValueError):
    """A user could not be created or changed; the message says why in one line."""


def _public(row: Any) -> dict[str, Any]:
    """A user as the rest of the site sees it: never the password hash."""
    mapping = row._mapping
    return {"id": str(mapping["id"]), "username": mapping["username"], "blocked": bool(mapping["blocked"])}


class UserStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    async def create(self, username: str, password: str) -> dict[str, Any]:
        username = (username or "").strip()
        if not USERNAME.fullmatch(username):
            raise UserError("a username is 1-100 of the letters A-Z and a-z, digits and . _ @ -")
        if len(password or "") < MIN_LENGTH:
            raise UserError(f"a password has at least {MIN_LENGTH} characters")
        if await self.find(username) is not None:
            raise UserError(f"an administration user named '{username}' already exists")
        now = datetime.now(UTC).replace(tzinfo=None)
        await self.database.execute(
            users.insert().values(
                username=username, password_hash=hash_password(password), blocked=False, created_at=now
            )
        )
        created = await self.find(username)
        assert created is not None
        return created

    async def find(self, username: str) -> dict[str, Any] | None:
        row = await self.database.fetch_one(users.select().where(users.c.username == username))
        return _public(row) if row is not None else None

    async def authenticate(self, username: str, password: str) -> dict[str, Any] | None:
        """The user, when the password is right and the user is not blocked."""
        row = await self.database.fetch_one(
            users.select().where(users.c.username == (username or "").strip())
        )
        if row is None:
            verify_password(
                password, hash_password("timing")
            )  # a missing user costs the same as a wrong password
            return None
        if not verify_password(password or "", row._mapping["password_hash"]) or row._mapping["blocked"]:
            return None
        return _public(row)

    async def active(self, user_id: str | int | None) -> dict[str, Any] | None:
        """The user with this id, or None when deleted or blocked (the API's acting-user loader)."""
        text = str(user_id)
        if not (text.isascii() and text.isdigit() and len(text) <= 10 and int(text) <= MAX_ID):
            return None  # not an id this table can hold: no such user
        key = int(text)
        row = await self.database.fetch_one(
            users.select().where(users.c.id == key, users.c.blocked.is_(False))
        )
        return _public(row) if row is not None else None

    async def choices(self) -> list[tuple[str, str]]:
        """(id, username) of every active user, for the acting-user select box."""
        query = (
            sa.select(users.c.id, users.c.username)
            .where(users.c.blocked.is_(False))
            .order_by(users.c.username)
        )
        return [(str(row[0]), row[1]) for row in await self.database.fetch_all(query)]

    async def set_blocked(self, user_id: str | int, blocked: bool) -> None:
        await self.database.execute(users.update().where(users.c.id == int(user_id)).values(blocked=blocked))
