"""The token store: create (the plain value is returned once), reissue, enable, disable, list, look up."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import sqlalchemy as sa
from databases import Database

from pb_headless.database.caches import Caches
from pb_headless.database.dialect import as_aware, to_naive_utc, utcnow
from pb_headless.database.shared_version import data_version_column
from pb_headless.database.statements import fetch_fixed_built
from pb_headless.idempotency.store import forget as forget_kept_answers
from pb_headless.scopes import is_valid_scope
from pb_headless.state import bump_version
from pb_headless.tables import state, tokens
from pb_headless.tokens.format import display_prefix, generate, hash_token

LAST_USED_RESOLUTION = timedelta(minutes=1)

# The statement every request runs: one module constant, so it is compiled once per database.
_VERSIONS_AND_TOKEN = (
    sa.select(state.c.version.label("pb_version"), data_version_column().label("pb_data_version"), *tokens.c)
    .select_from(
        state.outerjoin(tokens, tokens.c.token_hash == sa.bindparam("token_hash", type_=sa.String()))
    )
    .where(state.c.id == 1)
)
NAME_MAX_LENGTH = 100


@dataclass(frozen=True, slots=True)
class TokenLookup:
    version: int  # the shared state version
    data_version: int | None  # moves with every write through the library (None before it exists)
    token: TokenInfo | None


class TokenError(ValueError):
    """A token operation was refused; the message says why in one line."""


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A token as the API and the administration area see it; never its plain value. Its hash is
    carried only to name the token where a row id could be reused (kept idempotent answers); it is
    never rendered."""

    id: int
    name: str
    prefix: str
    scopes: tuple[str, ...]
    expires_at: datetime | None
    user_id: str | None
    enabled: bool
    created_at: datetime
    last_used_at: datetime | None
    token_hash: str = field(default="", repr=False, compare=False)

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or datetime.now(UTC))

    def is_live(self, now: datetime | None = None) -> bool:
        return self.enabled and not self.is_expired(now)

    def state(self, now: datetime | None = None) -> str:
        """`disabled`, `expired` or `enabled`: why it answers 401, or that it works (a disabled token
        says so first: enabling it is the owner's next step either way)."""
        if not self.enabled:
            return "disabled"
        return "expired" if self.is_expired(now) else "enabled"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "prefix": self.prefix,
            "scopes": list(self.scopes),
            "expires_at": _iso(self.expires_at),
            "expired": self.is_expired(),
            "state": self.state(),
            "user_id": self.user_id,
            "enabled": self.enabled,
            "created_at": _iso(self.created_at),
            "last_used_at": _iso(self.last_used_at),
        }


def _lookup_of(row: Mapping[str, Any]) -> TokenLookup:
    data_version = row["pb_data_version"]
    return TokenLookup(
        int(row["pb_version"]),
        None if data_version is None else int(data_version),
        token_from_row(row) if row["id"] is not None else None,
    )


def token_from_row(row: Mapping[str, Any]) -> TokenInfo:
    return TokenInfo(
        id=row["id"],
        name=row["name"],
        prefix=row["prefix"],
        scopes=tuple(orjson.loads(row["scopes"])),
        expires_at=as_aware(row["expires_at"]),
        user_id=row["user_id"],
        enabled=bool(row["enabled"]),
        created_at=as_aware(row["created_at"]) or datetime.now(UTC),  # NOT NULL: `or` is for the type
        last_used_at=as_aware(row["last_used_at"]),
        token_hash=row["token_hash"],
    )


def parse_scopes(scopes: str | Iterable[str]) -> tuple[str, ...]:
    """Scopes from a list or a comma/space separated string; at least one, each well formed."""
    items = scopes.replace(",", " ").split() if isinstance(scopes, str) else [s.strip() for s in scopes]
    unique = tuple(dict.fromkeys(item for item in items if item))
    if not unique:
        raise TokenError("a token needs at least one scope")
    bad = [scope for scope in unique if not is_valid_scope(scope)]
    if bad:
        raise TokenError(
            f"invalid scope '{bad[0]}': use '*', '<group>.*' or '<group>.<action>' of [a-z0-9_-]"
        )
    return unique


def parse_expiry(value: datetime | str | None, now: datetime | None = None) -> datetime | None:
    """An expiry in the future; a value without an offset is UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise TokenError(f"invalid expiry '{value}': use ISO 8601, e.g. 2027-01-31T00:00:00Z") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if value <= (now or datetime.now(UTC)):
        raise TokenError("the expiry date is in the past")
    return value


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class TokenStore:
    """Tokens on the host's database; every change moves the shared state version."""

    def __init__(self, database: Database, caches: Caches | None = None) -> None:
        self.database = database
        self.caches = caches or Caches()  # HeadlessAPI passes its own (database/caches.py)

    async def create(
        self,
        name: str,
        scopes: str | Iterable[str],
        *,
        expires_at: datetime | str | None = None,
        user_id: str | int | None = None,
    ) -> tuple[TokenInfo, str]:
        """Create a token; returns it and its plain value, which is never available again."""
        name = self._check_name(name)
        scope_list = parse_scopes(scopes)
        expiry = parse_expiry(expires_at)
        plain = generate()
        now = utcnow()
        values = {
            "name": name,
            "token_hash": hash_token(plain),
            "prefix": display_prefix(plain),
            "scopes": orjson.dumps(scope_list).decode(),
            "expires_at": to_naive_utc(expiry) if expiry else None,
            "user_id": None if user_id in (None, "") else str(user_id),
            "enabled": True,
            "created_at": now,
            "updated_at": now,
        }
        async with self.database.transaction():
            if await self._row(name) is not None:
                raise TokenError(f"a token named '{name}' already exists")
            await self.database.execute(tokens.insert().values(**values))
            await bump_version(self.database)
        return await self.get(name), plain

    async def reissue(self, name: str) -> tuple[TokenInfo, str]:
        """A new plain value for the same token; the old one stops working at once, everywhere."""
        plain = generate()
        async with self.database.transaction():
            dying = await self.get(name)
            changes = {
                "token_hash": hash_token(plain),
                "prefix": display_prefix(plain),
                "updated_at": utcnow(),
            }
            await self.database.execute(tokens.update().where(tokens.c.name == name).values(**changes))
            # The old value answers 401 from now on; what was kept for it can never be replayed.
            await forget_kept_answers(self.database, dying.token_hash)
            await bump_version(self.database)
        return await self.get(name), plain

    async def enable(self, name: str) -> TokenInfo:
        await self._update(name, enabled=True)
        return await self.get(name)

    async def disable(self, name: str) -> TokenInfo:
        await self._update(name, enabled=False)
        return await self.get(name)

    async def update(
        self,
        name: str,
        *,
        scopes: str | Iterable[str] | None = None,
        expires_at: datetime | str | None = None,
        clear_expiry: bool = False,
        user_id: str | int | None = None,
        clear_user: bool = False,
    ) -> TokenInfo:
        changes: dict[str, Any] = {}
        if scopes is not None:
            changes["scopes"] = orjson.dumps(parse_scopes(scopes)).decode()
        if clear_expiry:
            changes["expires_at"] = None
        elif expires_at not in (None, ""):
            expiry = parse_expiry(expires_at)
            changes["expires_at"] = to_naive_utc(expiry) if expiry is not None else None
        if clear_user:
            changes["user_id"] = None
        elif user_id not in (None, ""):
            changes["user_id"] = str(user_id)
        await self._update(name, **changes)
        return await self.get(name)

    async def delete(self, name: str) -> None:
        async with self.database.transaction():
            dying = await self.get(name)
            await self.database.execute(tokens.delete().where(tokens.c.name == name))
            await forget_kept_answers(self.database, dying.token_hash)
            await bump_version(self.database)

    async def get(self, name: str) -> TokenInfo:
        row = await self._row(name)
        if row is None:
            raise TokenError(f"no token named '{name}'")
        return token_from_row(row._mapping)

    async def list(self) -> list[TokenInfo]:
        rows = await self.database.fetch_all(tokens.select().order_by(tokens.c.name))
        return [token_from_row(row._mapping) for row in rows]

    async def lookup(self, plain: str) -> TokenInfo | None:
        """The token a plain value belongs to (live or not), or None."""
        return (await self.lookup_with_versions(plain)).token

    async def lookup_with_versions(self, plain: str) -> TokenLookup:
        """The token of a plain value and the two shared versions, in one round trip: what every
        request needs before anything else (which compiled snapshot applies, which kept counts hold).
        The statement is compiled once per API object (`database/statements.py`)."""
        values = {"token_hash": hash_token(plain)}
        found = await fetch_fixed_built(self.database, self.caches, _VERSIONS_AND_TOKEN, values, _lookup_of)
        return found[0] if found else TokenLookup(0, None, None)  # none: not installed

    async def touch(self, token: TokenInfo, now: datetime | None = None) -> None:
        """Record use, at most once a minute per token (the WHERE keeps concurrent writers to one)."""
        now_naive = to_naive_utc(now) if now else utcnow()
        cutoff = now_naive - LAST_USED_RESOLUTION
        query = (
            tokens.update()
            .where(tokens.c.id == token.id)
            .where(sa.or_(tokens.c.last_used_at.is_(None), tokens.c.last_used_at < cutoff))
            .values(last_used_at=now_naive)
        )
        await self.database.execute(query)

    async def _row(self, name: str) -> Any:
        return await self.database.fetch_one(tokens.select().where(tokens.c.name == name))

    async def _update(self, name: str, **changes: Any) -> None:
        async with self.database.transaction():
            await self.get(name)
            if changes:
                query = tokens.update().where(tokens.c.name == name).values(updated_at=utcnow(), **changes)
                await self.database.execute(query)
            await bump_version(self.database)

    @staticmethod
    def _check_name(name: str) -> str:
        name = (name or "").strip()
        if not name:
            raise TokenError("a token needs a name")
        if len(name) > NAME_MAX_LENGTH:
            raise TokenError(f"a token name is at most {NAME_MAX_LENGTH} characters")
        return name
