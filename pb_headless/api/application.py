"""`HeadlessAPI`: the sub-application the host mounts at `/api/pb/v1`.

The request path, in the order of docs/endpoints.md ("The order of checks"):

1. OPTIONS is answered at once (204), never counted.
2. The rate limit counts the request (429 past it); every answer carries the `X-RateLimit-*` headers.
3. `/health` answers without a token.
4. The body, if any, is read whole within `body_timeout` (408) before any connection is taken.
5. Within `database_timeout` (503 past it or when the database is down), on one connection:
   authentication (`auth.Authenticator`: dormant rule, token, acting user), then `dispatch` (object,
   operation, scope, record, body checks, and the handler).
Errors of every stage become the one error envelope; anything unexpected is a 500 carrying a request id.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from databases import Database
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from pb_headless.api.addresses import Match, check_not_shadowing, match
from pb_headless.api.batch_operations import operation_count
from pb_headless.api.body import MAX_BODY_BYTES, Body, BodyTimeout, read_body, replaying
from pb_headless.api.context import ApiInfo, RequestContext
from pb_headless.api.dispatch import dispatch
from pb_headless.api.service import HEALTH_TIMEOUT, health
from pb_headless.auth import Authenticator, UserLoader
from pb_headless.changes import ChangeLog, StreamHub, TriggerSync
from pb_headless.changes.hub import MAX_STREAMS
from pb_headless.custom_routes import collect_routes
from pb_headless.database.accelerators import accelerator_of, reads_inline
from pb_headless.database.allocator import release_freed_memory
from pb_headless.database.backends import backend_for
from pb_headless.database.database_errors import is_unavailable
from pb_headless.database.deadline import UNAVAILABLE, UnitOfWork
from pb_headless.database.sqlite.serving import fit_for_serving
from pb_headless.errors import (
    ApiError,
    MethodNotAllowed,
    RateLimited,
    RequestTimeout,
    ServerError,
    ServiceUnavailable,
    error_response,
)
from pb_headless.http.paths import route_path
from pb_headless.http.responses import empty_response
from pb_headless.proxies import TrustedProxies, rate_key
from pb_headless.ratelimit import MemoryRateLimiter, RateDecision, RateLimiter
from pb_headless.registry import ApiRegistry
from pb_headless.release import VERSION
from pb_headless.settings import SettingsStore
from pb_headless.state.snapshot import SNAPSHOT_SCOPE_KEY, Snapshot, SnapshotCache
from pb_headless.tokens import TokenStore
from pb_headless.webhooks.options import WebhookOptions
from pb_headless.webhooks.worker import WebhookWorker

log = logging.getLogger("pb_headless")

PREFIX = "/api/pb/v1"
DATABASE_TIMEOUT = 5.0
KEPT_ROOTS = 64  # API addresses by scheme, Host, server and root path (`HeadlessAPI.api_root`)
BODY_TIMEOUT = 10.0
RELEASE_INTERVAL = 30.0  # seconds between two returns of freed memory while requests come (allocator.py)
_CHARGED = "pb_headless.rate"  # the scope's latest rate decision, once a batch counted its operations
_EAGER_KINDS = frozenset(("service", "collection", "record"))  # the API's own reads (`_serve`)


class HeadlessAPI:
    """The API sub-application; docs/hosting.md describes every option."""

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
        database_timeout: float = DATABASE_TIMEOUT,
        body_timeout: float = BODY_TIMEOUT,
        migrate: bool = False,
        webhooks: bool | WebhookOptions = True,
        change_log: bool = True,
        max_streams: int = MAX_STREAMS,
    ) -> None:
        if database_timeout <= 0 or body_timeout <= 0:
            raise ValueError("database_timeout and body_timeout are positive numbers of seconds")
        self.database = database
        self.registry = registry
        self.settings = settings or SettingsStore(database)
        # What differs between the three databases, by name, and what is kept per database: the
        # caches, bounded (docs/performance.md), which the token store and the handlers share.
        self.backend = backend_for(database)
        self.caches = self.backend.caches
        self.tokens = tokens or TokenStore(database, self.caches)
        self.proxies = (
            trusted_proxies
            if isinstance(trusted_proxies, TrustedProxies)
            else TrustedProxies(trusted_proxies)
        )
        self.rate_limiter = rate_limiter or _default_limiter(redis_url, rate_limit)
        self.routes = tuple(collect_routes(routes))
        check_not_shadowing(self.routes)
        self.prefix = prefix.rstrip("/")
        self.title = title
        self.version = VERSION
        self.database_timeout = database_timeout
        self.body_timeout = body_timeout
        self.migrate = migrate  # startup brings older library tables up instead of refusing them
        self.snapshots = SnapshotCache(database, registry)
        self.authenticator = Authenticator(
            database, self.snapshots, self.tokens, user_loader, timeout=database_timeout
        )
        self.info = ApiInfo(title, self.version, self.routes)
        self._roots: dict[tuple[Any, ...], str] = {}
        self.webhooks = _webhook_worker(database, self.snapshot, webhooks)
        self.change_log = ChangeLog(self.backend)  # the one owner of the log's triggers and reads
        self.changes = TriggerSync(self.change_log, enabled=change_log)
        self.streams = StreamHub(self.change_log, self.authenticator, max_streams=max_streams)
        self._served = False  # a request came since freed memory was last given back
        self._releasing: asyncio.TimerHandle | None = None
        fit_for_serving(database)

    @property
    def user_loader(self) -> UserLoader | None:
        return self.authenticator.user_loader

    # -- life cycle ----------------------------------------------------------------------------
    async def startup(self) -> None:
        """Check the library's tables are at this release's version (docs/upgrading.md), then build the
        registry once, so a wrong schema or a broken declaration stops the start instead of a request;
        put the change log's triggers on the published tables; then start delivering webhooks in the
        background (docs/webhooks.md)."""
        from pb_headless.migrations.migrate import check
        from pb_headless.query.narrowings import check_narrowings
        from pb_headless.tables import install

        if await check(self.database, migrate=self.migrate):  # older tables, and the host opted in
            await install(self.database)
        snapshot = await self.snapshot()
        await check_narrowings(self.database, snapshot.catalog)
        await self.changes.follow_catalog(snapshot)
        if self.webhooks is not None:
            self.webhooks.start()
        self._release_later()

    async def shutdown(self) -> None:
        """Close what the API opened itself: the change streams, the webhook worker, the Redis
        connection pool, the reflection engine."""
        if self._releasing is not None:
            self._releasing.cancel()
            self._releasing = None
        self.streams.close()
        if self.webhooks is not None:
            await self.webhooks.stop()
        close = getattr(self.rate_limiter, "aclose", None)
        if close is not None:
            await close()
        await self.registry.close()

    async def snapshot(self) -> Snapshot:
        """The compiled state of the current shared version (catalog, settings, live tokens)."""
        return await self.authenticator.snapshot()

    def _release_freed_memory(self) -> None:
        """Every RELEASE_INTERVAL seconds in which a request came, the pages of memory freed since go
        back to the system (database/allocator.py): requests allocate and free in ways that leave free
        pages between blocks still in use, counted in RSS until given back (docs/performance.md,
        "Freed memory"). An idle process is left alone."""
        if self._served:
            self._served = False
            release_freed_memory()
        self._release_later()

    def _release_later(self) -> None:
        self._releasing = asyncio.get_running_loop().call_later(RELEASE_INTERVAL, self._release_freed_memory)

    def origin(self, request: Request) -> str:
        """Scheme and host of this request, from X-Forwarded-* only when a trusted proxy sent them."""
        return self.proxies.origin(request.scope)

    def api_root(self, request: Request) -> str:
        """The absolute address of the API, for links and the OpenAPI `servers`. Without trusted
        proxies it depends on the scheme, Host, server and root path alone: kept by those (a few
        entries, emptied when full), so a request does not parse its Host again."""
        scope = request.scope
        if self.proxies.networks:
            return self._api_root(scope)
        hosts = tuple(value for name, value in scope.get("headers", ()) if name == b"host")
        server = scope.get("server")
        if server is not None and type(server) is not tuple:  # Starlette's TestClient sends a list
            server = tuple(server)
        key = (scope.get("scheme"), hosts, server, scope.get("root_path", ""))
        found = self._roots.get(key)
        if found is None:
            if len(self._roots) >= KEPT_ROOTS:
                self._roots.clear()
            found = self._roots[key] = self._api_root(scope)
        return found

    def _api_root(self, scope: Scope) -> str:
        root = str(scope.get("root_path", ""))
        mounted = root if root.endswith(self.prefix) else root + self.prefix
        return self.proxies.origin(scope) + mounted

    def client_ip(self, scope: Scope) -> str:
        return self.proxies.client_ip(scope)

    async def options_headers(self, scope: Scope) -> dict[str, str]:
        """What every OPTIONS answer under the API carries, whoever answers it (this app, or
        `CORSMiddleware` before the host's routing): the client's rate state, without counting."""
        return (await self.rate_limiter.peek(rate_key(self.client_ip(scope)))).headers()

    # -- ASGI ----------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        self._served = True
        accelerator_of(self.database).arrived()
        response = await self._answer(scope, receive)
        if response is None:  # the client went away; there is no one to answer
            return
        await response(scope, receive, _without_body(send) if scope["method"] == "HEAD" else send)

    async def _answer(self, scope: Scope, receive: Receive) -> Response | None:
        if scope["method"] == "OPTIONS":  # never counted
            return empty_response(204, await self.options_headers(scope))
        path = route_path(scope, self.prefix)
        limiter, key = self.rate_limiter, rate_key(self.client_ip(scope))
        if type(limiter) is MemoryRateLimiter:  # decides at once: no coroutine (a subclass keeps its `hit`)
            decision = limiter.decide(key, count=True)
        else:
            decision = await limiter.hit(key)
        try:
            response = await self._serve(scope, receive, path, decision)
        except ApiError as error:
            response = error_response(error)
        except ClientDisconnect:
            log.info("pb_headless: the client disconnected during %s %s", scope["method"], path)
            return None
        except Exception as error:
            response = error_response(_failure(scope, path, error))
        _add_rate_headers(response, scope.get(_CHARGED, decision))
        return response

    async def _serve(self, scope: Scope, receive: Receive, path: str, decision: RateDecision) -> Response:
        if not decision.allowed:
            raise RateLimited(decision.retry_after)
        if path == "/health":
            if scope["method"] not in ("GET", "HEAD"):
                raise MethodNotAllowed(["GET", "HEAD", "OPTIONS"])
            inline = reads_inline(self.database)
            unit = UnitOfWork(self.database, min(self.database_timeout, HEALTH_TIMEOUT))
            return await health(unit, self._checked_snapshot(scope, unit, inline), self.version, eager=inline)
        try:
            body = await read_body(scope, receive, limit=MAX_BODY_BYTES, timeout=self.body_timeout)
        except BodyTimeout:
            raise RequestTimeout() from None
        request = Request(scope, replaying(body, receive))
        found = match(path, self.routes)
        if found.kind == "batch" and scope["method"] == "POST":
            await self._charge(scope, operation_count(body.content) - 1)
        inline = reads_inline(self.database)
        unit = UnitOfWork(self.database, self.database_timeout)
        work = (
            # SQLite's short reads need no connection of the request's; a statement that does takes
            # one of the kept connections for itself (docs/performance.md).
            self._authenticated_on(unit, request, found, decision, body)
            if inline
            else self._authenticated(unit, request, found, decision, body)
        )
        # SQLite's reads on the loop mostly never wait: the API's own reads start at once, and only
        # one that has to wait gets the time limit's task (database/deadline.py). Integrators' code
        # (custom routes, a user loader) always runs in a task of its own.
        eager = (
            inline
            and scope["method"] in ("GET", "HEAD")
            and found.kind in _EAGER_KINDS
            and self.authenticator.user_loader is None
        )
        return await unit.run(work, eager=eager)

    async def _charge(self, scope: Scope, extra: int) -> None:
        """A batch counts as one request per operation: the rest of them are counted here, before
        the token is read (429 when the client's window has no room for all of them)."""
        key = rate_key(self.client_ip(scope))
        for _ in range(extra):
            decision = await self.rate_limiter.hit(key)
            scope[_CHARGED] = decision
            if not decision.allowed:
                raise RateLimited(decision.retry_after)

    async def _authenticated(
        self, unit: UnitOfWork, request: Request, found: Match, decision: RateDecision, body: Body
    ) -> Response:
        async with unit.held():  # one connection for every query of the request
            response = await self._authenticated_on(unit, request, found, decision, body)
            unit.answered(response)  # ready before the release: a stall there cannot turn it into a 503
        return response

    async def _authenticated_on(
        self, unit: UnitOfWork, request: Request, found: Match, decision: RateDecision, body: Body
    ) -> Response:
        authentication = await self.authenticator.authenticate(request.headers, _recorder(request.scope))
        if self.changes.due(authentication.snapshot.version):  # DDL only when the version moved
            await self.changes.follow_catalog(authentication.snapshot)
        context = RequestContext(
            backend=self.backend,
            api_root=self.api_root(request),
            principal=authentication.principal,
            snapshot=authentication.snapshot,
            rate=decision,
            body=body,
            info=self.info,
            data_version=authentication.data_version,
            changes=self.changes,
            streams=self.streams,
            unit=unit,
        )
        return await dispatch(context, request, found)

    async def _checked_snapshot(self, scope: Scope, unit: UnitOfWork, inline: bool) -> None:
        """Health's check of the database: read the shared version, as every request does, on the
        unit's connection, closed if the check is cut off (a frozen server keeps no pool place)."""
        if inline:
            _recorder(scope)(await self.snapshot())
            return
        async with unit.held():
            _recorder(scope)(await self.snapshot())

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


def _add_rate_headers(response: Response, decision: RateDecision) -> None:
    """Every answer carries the client's rate state; appended as raw headers unless the response
    (an integrator's endpoint) set them itself, in which case they are replaced."""
    raw = response.raw_headers
    for name, _ in raw:
        if name.startswith(b"x-ratelimit-"):
            response.headers.update(decision.headers())
            return
    raw += decision.raw_headers()


def _recorder(scope: Scope) -> Callable[[Snapshot], None]:
    def record(snapshot: Snapshot) -> None:
        scope[SNAPSHOT_SCOPE_KEY] = snapshot

    return record


def _failure(scope: Scope, path: str, error: Exception) -> ApiError:
    """An exception no stage answered: the database being away is a 503, anything else a 500 whose
    body names only the request id of the log line."""
    if is_unavailable(error):
        return ServiceUnavailable(UNAVAILABLE)
    request_id = uuid.uuid4().hex[:16]
    log.error(
        "pb_headless: request %s %s failed (request id %s)", scope["method"], path, request_id, exc_info=error
    )
    return ServerError(request_id)


def _webhook_worker(
    database: Database, snapshot: Callable[[], Awaitable[Snapshot]], option: bool | WebhookOptions
) -> WebhookWorker | None:
    if option is False:
        return None
    return WebhookWorker(database, snapshot, option if isinstance(option, WebhookOptions) else None)


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
