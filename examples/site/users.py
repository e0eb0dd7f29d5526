"""Administration users: made from the console, signed in at /mgr/login, named by tokens as acting users."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from databases import Database

from examples.site.passwords import MIN_LENGTH, check_password, hash_password, stand_in_hash
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
        hashed = await asyncio.to_thread(hash_password, password)
        await self.database.execute(
            users.insert().values(username=username, password_hash=hashed, blocked=False, created_at=now)
        )
        created = await self.find(username)
        assert created is not None
        return created

    async def find(self, username: str) -> dict[str, Any] | None:
        row = await self.database.fetch_one(users.select().where(users.c.username == username))
        return _public(row) if row is not None else None

    async def authenticate(self, username: str, password: str) -> dict[str, Any] | None:
        """The user, when the password is right and the user is not blocked.

        Exactly one password check runs whatever the outcome (an unknown user is checked against a
        stand-in hash), so the time taken does not tell whether the user exists. The check runs in
        a worker thread, so a burst of sign-ins never holds up the event loop.
        """
        row = await self.database.fetch_one(
            users.select().where(users.c.username == (username or "").strip()[:100])
        )
        stored = row._mapping["password_hash"] if row is not None else stand_in_hash()
        matches = await check_password(password or "", stored)
        if row is None or not matches or row._mapping["blocked"]:
            return None
        return _public(row)

    async def set_password(self, username: str, password: str) -> dict[str, Any]:
        """A new password for an existing user (the console's `admin password`)."""
        user = await self.find((username or "").strip())
        if user is None:
            raise UserError(f"there is no administration user named '{username}'")
        if len(password or "") < MIN_LENGTH:
            raise UserError(f"a password has at least {MIN_LENGTH} characters")
        hashed = await asyncio.to_thread(hash_password, password)
        await self.database.execute(
            users.update().where(users.c.id == int(user["id"])).values(password_hash=hashed)
        )
        return user

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
