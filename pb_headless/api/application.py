"""`HeadlessAPI`: the sub-application the host mounts at `/api/pb/v1`.

Every request passes the checks of CONTRACT §1 in order: OPTIONS, rate limit, dormant API, token,
then the endpoint's own object / operation / scope / record checks. Errors of any stage become the
one error envelope; an unexpected exception becomes a 500 carrying only a request id.
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from databases import Database
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from pb_headless import __version__
from pb_headless.api import handlers
from pb_headless.api.responses import empty_response
from pb_headless.api.routing import check_not_shadowing, match, normalize
from pb_headless.api.snapshot import Snapshot, SnapshotCache
from pb_headless.auth import API_SCOPE_KEY, Principal, token_from_headers
from pb_headless.db import dialect_name, prepare
from pb_headless.errors import ApiError, RateLimited, ServerError, Unauthorized, error_response
from pb_headless.proxies import TrustedProxies, rate_key
from pb_headless.query.statements import fetch_fixed
from pb_headless.query.totals import note_data_version
from pb_headless.ratelimit import MemoryRateLimiter, RateDecision, RateLimiter
from pb_headless.registry import ApiRegistry
from pb_headless.routes import RouteDef, collect_routes
from pb_headless.settings import SettingsStore
from pb_headless.state import data_version_column, read_version
from pb_headless.tables import state, tokens
from pb_headless.tokens import TokenStore, hash_token, is_well_formed
from pb_headless.tokens.store import LAST_USED_RESOLUTION, token_from_row

log = logging.getLogger("pb_headless")

PREFIX = "/api/pb/v1"
UserLoader = Callable[[str], Any]


def _version_and_token() -> sa.Select[Any]:
    """One round trip for what every request needs: the shared version, the data version, the token row."""
    joined = state.outerjoin(tokens, tokens.c.token_hash == sa.bindparam("token_hash", type_=sa.String()))
    return sa.select(
        state.c.version.label("pb_version"), data_version_column().label("pb_data_version"), *tokens.c
    ).select_from(joined).where(state.c.id == 1)


VERSION_AND_TOKEN = _version_and_token()  # compiled once per database (query/statements.py)


class HeadlessAPI:
    """The API sub-application; see docs/hosting.md for every option."""

    def __init__(
        self,
        database: Database,
        registry: ApiRegistry,
        *,
        settings: SettingsStore | None = None,
        tokens: TokenStore | None = None,
        user_loader: UserLoader | None = None,
        rate_limiter: RateLimiter | None = None,
        redis_url: str | None = None,
        rate_limit: int = 120,
        trusted_proxies: Iterable[str] | str | TrustedProxies = (),
        routes: Iterable[Any] = (),
        prefix: str = PREFIX,
        title: str = "pb_headless API",
    ) -> None:
        self.database = database
        self.registry = registry
        self.settings = settings or SettingsStore(database)
        self.tokens = tokens or TokenStore(database)
        self.user_loader = user_loader
        self.proxies = (
            trusted_proxies
            if isinstance(trusted_proxies, TrustedProxies)
            else TrustedProxies(trusted_proxies)
        )
        self.rate_limiter = rate_limiter or _default_limiter(redis_url, rate_limit)
        self.routes: tuple[RouteDef, ...] = tuple(collect_routes(routes))
        check_not_shadowing(self.routes)
        self.prefix = prefix.rstrip("/")
        self.title = title
        self.version = __version__
        self.snapshots = SnapshotCache(database, registry)
        self.dialect = dialect_name(database)
        prepare(database)

    # -- life cycle ----------------------------------------------------------------------------
    async def startup(self) -> None:
        """Build the registry once, so a broken declaration stops the start instead of a request."""
        await self.snapshot()

    async def shutdown(self) -> None:
        """Close what the API opened itself: the Redis connection pool, the reflection engine."""
        close = getattr(self.rate_limiter, "aclose", None)
        if close is not None:
            await close()
        await self.registry.close()

    async def snapshot(self) -> Snapshot:
        return await self.snapshots.get(await read_version(self.database))

    # -- ASGI ----------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        scope.setdefault(API_SCOPE_KEY, self)
        request = Request(scope, receive)
        response = await self.respond(request, self.route_path(scope))
        if scope["method"] == "HEAD":
            send = _without_body(send)
        await response(scope, receive, send)

    def route_path(self, scope: Scope) -> str:
        """The path below the API's prefix, however the host mounted it."""
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        elif path.startswith(self.prefix + "/") or path == self.prefix:
            path = path[len(self.prefix) :]
        return normalize(path)

    def origin(self, request: Request) -> str:
        """Scheme and host of this request, from X-Forwarded-* only when a trusted proxy sent them."""
        scope = request.scope
        scheme = self.proxies.forwarded(scope, b"x-forwarded-proto") or scope.get("scheme", "http")
        host = (
            self.proxies.forwarded(scope, b"x-forwarded-host") or request.headers.get("host") or "localhost"
        )
        return f"{scheme}://{host}"

    def api_root(self, request: Request) -> str:
        """The absolute address of the API, for links and the OpenAPI `servers`."""
        root = request.scope.get("root_path", "")
        mounted = root if root.endswith(self.prefix) else root + self.prefix
        return self.origin(request) + mounted

    async def respond(self, request: Request, path: str) -> Response:
        if request.method == "OPTIONS":  # never counted (§1.1); the answer only shows the client's state
            peeked = await self.rate_limiter.peek(rate_key(self.client_ip(request.scope)))
            return empty_response(204, peeked.headers())
        decision = await self._hit(request.scope)
        request.state.rate = decision
        try:
            if not decision.allowed:
                raise RateLimited(decision.retry_after)
            response = await self._dispatch(request, path)
        except ApiError as error:
            response = error_response(error)
        except Exception:
            request_id = uuid.uuid4().hex[:16]
            log.exception(
                "pb_headless: request %s %s failed (request id %s)", request.method, path, request_id
            )
            response = error_response(ServerError(request_id))
        response.headers.update(decision.headers())
        return response

    async def _dispatch(self, request: Request, path: str) -> Response:
        if path == "/health":
            return await handlers.health(self, request)
        # One connection for the whole request: every query after the first reuses it.
        async with self.database.connection():
            principal = await self.authenticate(request)
            return await handlers.dispatch(self, request, match(path, self.routes), principal)

    # -- authentication ------------------------------------------------------------------------
    async def authenticate(self, request: Request) -> Principal:
        """CONTRACT §1.3-4: the dormant rule, then the token; 401 for every kind of bad token."""
        plain, header_error = _token_or_error(request)
        looked_up = plain is not None and is_well_formed(plain)
        if looked_up:
            token_hash = hash_token(plain)  # type: ignore[arg-type]
            rows = await fetch_fixed(self.database, VERSION_AND_TOKEN, {"token_hash": token_hash})
            row = rows[0] if rows else None
            version = int(row._mapping["pb_version"]) if row is not None else 0
            note_data_version(row["pb_data_version"] if row is not None else None)
        else:
            row, version = None, await read_version(self.database)
        snapshot = await self.snapshots.get(version)
        request.state.snapshot = snapshot
        now = datetime.now(UTC)
        if snapshot.is_dormant(now):
            raise Unauthorized()
        if header_error is not None:
            raise header_error
        if plain is None:
            raise Unauthorized(
                "An API token is required: send 'Authorization: Bearer <token>' or 'X-API-Key'."
            )
        if row is None or row._mapping["id"] is None:
            raise Unauthorized("The API token is not valid.")
        token = token_from_row(row._mapping)
        if not token.is_live(now):
            raise Unauthorized("The API token is disabled or expired.")
        user = await self._acting_user(token.user_id)
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            await self.tokens.touch(token, now)
        principal = Principal(token, user)
        request.state.token, request.state.user, request.state.principal = token, user, principal
        return principal

    async def _acting_user(self, user_id: str | None) -> Any:
        if user_id is None or self.user_loader is None:
            return None
        user = self.user_loader(user_id)
        if inspect.isawaitable(user):
            user = await user
        if user is None:
            raise Unauthorized("The token's acting user is blocked or deleted.")
        return user

    # -- rate limit ----------------------------------------------------------------------------
    def client_ip(self, scope: Scope) -> str:
        return self.proxies.client_ip(scope)

    async def _hit(self, scope: Scope) -> RateDecision:
        return await self.rate_limiter.hit(rate_key(self.client_ip(scope)))

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as error:
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _token_or_error(request: Request) -> tuple[str | None, ApiError | None]:
    try:
        return token_from_headers(request.headers), None
    except ApiError as error:
        return None, error


def _default_limiter(redis_url: str | None, limit: int) -> RateLimiter:
    if redis_url:
        from pb_headless.ratelimit.redis import RedisRateLimiter

        return RedisRateLimiter(redis_url, limit=limit)
    return MemoryRateLimiter(limit=limit)


def _without_body(send: Send) -> Callable[[Message], Awaitable[None]]:
    """HEAD answers as GET would, without the body."""

    async def send_head(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return send_head
