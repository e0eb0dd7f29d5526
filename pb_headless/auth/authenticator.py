"""Authentication: a request's headers in; the principal it runs as and the registry snapshot out.

One query answers both what every request needs: the shared state version (which snapshot of the
catalog and settings applies) and the token row (`TokenStore.lookup_with_versions`). Then, in the
order of docs/endpoints.md ("The order of checks"): the dormant rule, ambiguous headers (400), a
missing token, a token that is not live, an acting user the host no longer knows. Every bad token
gets one and the same 401 body, so a client cannot tell an unknown token from a disabled, expired,
reissued-away or orphaned one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from databases import Database
from starlette.datastructures import Headers

from pb_headless.auth.credentials import read_token
from pb_headless.auth.principal import Principal
from pb_headless.errors import ApiError, Unauthorized
from pb_headless.http.calls import maybe_await
from pb_headless.state import read_version
from pb_headless.state.snapshot import Snapshot, SnapshotCache
from pb_headless.tokens import TokenInfo, TokenStore, is_well_formed
from pb_headless.tokens.store import LAST_USED_RESOLUTION

UserLoader = Callable[[str], Any]
MISSING_TOKEN = "An API token is required: send 'Authorization: Bearer <token>' or 'X-API-Key: <token>'."
INVALID_TOKEN = "The API token is not valid."


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: made on every request (api/context.py)
class Authentication:
    principal: Principal
    snapshot: Snapshot
    # The data version read with the token (None when it was not read): which kept counts still hold.
    data_version: int | None = None


class Authenticator:
    """Turns request headers into an `Authentication`, or raises the 400/401 the request deserves."""

    def __init__(
        self,
        database: Database,
        snapshots: SnapshotCache,
        tokens: TokenStore,
        user_loader: UserLoader | None = None,
        *,
        timeout: float = 5.0,
    ) -> None:
        self.database = database
        self.timeout = timeout  # the database time limit guards use around `authenticate`
        self.snapshots = snapshots
        self.tokens = tokens
        self.user_loader = user_loader

    async def snapshot(self) -> Snapshot:
        """The snapshot of the current shared version (one query, then a look-up)."""
        version = await read_version(self.database, self.tokens.caches)
        snapshot = self.snapshots.at_hand(version)  # no coroutine while the version stands
        return await self.snapshots.get(version) if snapshot is None else snapshot

    async def authenticate(
        self, headers: Headers, seen: Callable[[Snapshot], None] | None = None
    ) -> Authentication:
        """The principal and snapshot; `seen` is told the snapshot before any check can refuse."""
        plain, problem = _token_or_problem(headers)
        if plain is None or not is_well_formed(plain):  # no query for what cannot be a token
            version, token, data_version = await read_version(self.database, self.tokens.caches), None, None
        else:  # the state version, the token, and the data version, read in the same query
            lookup = await self.tokens.lookup_with_versions(plain)
            version, token, data_version = lookup.version, lookup.token, lookup.data_version
        snapshot = self.snapshots.at_hand(version)  # no coroutine while the version stands
        if snapshot is None:
            snapshot = await self.snapshots.get(version)
        if seen is not None:
            seen(snapshot)
        now = datetime.now(UTC)
        if snapshot.is_dormant(now):
            # Dormant answers depend only on whether a token was sent: they say nothing about it.
            raise Unauthorized(MISSING_TOKEN if plain is None else INVALID_TOKEN)
        if problem is not None:
            raise problem
        if plain is None:
            raise Unauthorized(MISSING_TOKEN)
        if token is None or not token.is_live(now):
            raise Unauthorized(INVALID_TOKEN)
        # No coroutine for the usual token, which acts for no user of a loader.
        user = None if token.user_id is None or self.user_loader is None else await self._acting_user(token)
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            await self.tokens.touch(token, now)
        return Authentication(Principal(token, user), snapshot, data_version)

    async def _acting_user(self, token: TokenInfo) -> Any:
        if token.user_id is None or self.user_loader is None:
            return None
        user = await maybe_await(self.user_loader(token.user_id))
        if user is None:  # the host deleted or blocked the user the token acts for
            raise Unauthorized(INVALID_TOKEN)
        return user


def _token_or_problem(headers: Headers) -> tuple[str | None, ApiError | None]:
    try:
        return read_token(headers), None
    except ApiError as problem:
        return None, problem
