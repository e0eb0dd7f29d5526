"""Cross-origin access: the policy built from the `service_cors_*` settings, and the middleware.

The host wraps its whole application in `CORSMiddleware`, so OPTIONS under the API is answered
before the host's routing ever sees it. The policy, with every header it can answer, is compiled
once per settings version (`Snapshot.derive`); a request only compares its origin against it.
CORS is silent while no origin is configured and while the API is dormant
(docs/cors-and-rate-limits.md, docs/authentication.md).
"""

from __future__ import annotations

import fnmatch
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pb_headless.auth import AUTHENTICATOR_KEY
from pb_headless.http.paths import is_below, site_path
from pb_headless.settings import is_on
from pb_headless.state.snapshot import SNAPSHOT_SCOPE_KEY, Snapshot
from pb_headless.tables import DEFAULT_SETTINGS

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

log = logging.getLogger("pb_headless")

EXPOSED_HEADERS = (
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Location, "
    "X-Truncated-Relations, ETag, Idempotent-Replayed"
    ", Preference-Applied"  # Prefer: handling=… (docs/query.md)
)
# The administration area never gets CORS headers, whatever the paths say (docs/cors-and-rate-limits.md).
ADMIN_AREA = "mgr"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TO_READ: Any = object()  # `_policy_at_hand`: the policy needs the settings read first
MAX_ORIGIN = 300  # scheme, a 253-character host and a port; longer is not an origin a browser sends
HeaderPairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CorsPolicy:
    """The `service_cors_*` settings, parsed; `enabled` is False while no origin is configured."""

    origins: frozenset[str]  # exact origins, lower case, no trailing slash
    any_origin: bool  # `*` is among the origins
    patterns: tuple[re.Pattern[str], ...]  # `https://*.<domain>`
    paths: tuple[re.Pattern[str], ...]
    methods: str
    headers: str
    credentials: bool
    max_age: str

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> CorsPolicy:
        """A missing origins setting reads as off; other missing settings take the installer's default."""

        def setting(key: str) -> str:
            return settings.get(key, DEFAULT_SETTINGS[key])

        origins = [o.strip().lower().rstrip("/") for o in settings.get("service_cors_origins", "").split(",")]
        patterns = [_origin_pattern(o) for o in origins if "*" in o and o != "*"]
        max_age = setting("service_cors_max_age").strip()
        return cls(
            origins=frozenset(o for o in origins if o and "*" not in o),
            any_origin="*" in origins,
            patterns=tuple(p for p in patterns if p is not None),
            paths=tuple(_path_pattern(p) for p in setting("service_cors_paths").split(",") if p.strip()),
            methods=_list(setting("service_cors_methods")),
            headers=_list(setting("service_cors_headers")),
            credentials=is_on(settings.get("service_cors_credentials")),
            max_age=max_age if max_age.isdigit() else DEFAULT_SETTINGS["service_cors_max_age"],
        )

    @property
    def enabled(self) -> bool:
        return self.any_origin or bool(self.origins) or bool(self.patterns)

    def covers_path(self, path: str) -> bool:
        relative = path.lstrip("/")
        if relative == ADMIN_AREA or relative.startswith(ADMIN_AREA + "/"):
            return False
        return any(pattern.fullmatch(relative) for pattern in self.paths)

    def is_listed(self, origin: str) -> bool:
        """Named by an exact origin or a subdomain pattern (not merely let in by `*`)."""
        if len(origin) > MAX_ORIGIN:
            return False
        origin = origin.lower()
        return origin in self.origins or any(pattern.fullmatch(origin) for pattern in self.patterns)

    def is_allowed_origin(self, origin: str) -> bool:
        return self.any_origin or self.is_listed(origin)

    def answer_headers(self, origin: str) -> HeaderPairs:
        """The headers of any answer to an allowed origin (docs/cors-and-rate-limits.md)."""
        return (*self._grant(origin), *self._exposed)

    def preflight_headers(self, origin: str) -> HeaderPairs:
        """A preflight's headers: the configured lists whatever was asked; the browser decides."""
        return (*self._grant(origin), *self._preflight)

    def _grant(self, origin: str) -> HeaderPairs:
        """`*` answers for `*` unless the origin is also listed and credentials are on; browsers refuse
        credentials with `*`, so `*` never comes with Access-Control-Allow-Credentials."""
        if self.credentials and self.is_listed(origin):
            return (("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"))
        if self.any_origin:
            return self._wildcard
        return (("Access-Control-Allow-Origin", origin),)

    def warnings(self) -> list[str]:
        """What the settings page shows next to the CORS settings."""
        if self.any_origin and self.credentials:
            return [
                "Origins '*' with credentials on: browsers refuse credentials with '*', so the API "
                "answers '*' without Access-Control-Allow-Credentials. "
                "List the origins to allow credentials."
            ]
        return []

    # Computed once per policy, that is once per settings change.
    @cached_property
    def _wildcard(self) -> HeaderPairs:
        return (("Access-Control-Allow-Origin", "*"),)

    @cached_property
    def _exposed(self) -> HeaderPairs:
        return (("Access-Control-Expose-Headers", EXPOSED_HEADERS),)

    @cached_property
    def _preflight(self) -> HeaderPairs:
        return (
            ("Access-Control-Allow-Methods", self.methods),
            ("Access-Control-Allow-Headers", self.headers),
            ("Access-Control-Max-Age", self.max_age),
        )


def _origin_pattern(origin: str) -> re.Pattern[str] | None:
    """`https://*.example.com` → any subdomain depth over that scheme, never the bare or look-alike domain."""
    scheme, sep, host = origin.partition("://")
    domain = host[2:]
    if not sep or not scheme or not host.startswith("*.") or not domain or "*" in domain or "/" in domain:
        return None
    return re.compile(re.escape(scheme) + r"://(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+" + re.escape(domain))


def _path_pattern(glob: str) -> re.Pattern[str]:
    """`api/*` (relative to the site root; `*` crosses `/`) as a regular expression."""
    return re.compile(fnmatch.translate(glob.strip().lstrip("/")))


def _list(value: str) -> str:
    return ",".join(part.strip() for part in value.split(",") if part.strip())


def policy_of(snapshot: Snapshot) -> CorsPolicy:
    """The policy of a settings version, compiled on first use."""
    return snapshot.derive("cors", lambda s: CorsPolicy.from_settings(s.settings))


class CORSMiddleware:
    """Wraps the host: answers OPTIONS under the API before routing, adds CORS headers as
    docs/cors-and-rate-limits.md describes.

    An answer the API made after reading the settings version uses that snapshot (the API leaves it
    under `SNAPSHOT_SCOPE_KEY`), so a cross-origin API call costs no extra query; other requests with
    an Origin read the version once.
    """

    def __init__(self, app: ASGIApp, api: HeadlessAPI) -> None:
        self.app = app
        self.api = api
        self._read_failed = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[AUTHENTICATOR_KEY] = self.api.authenticator  # for ApiAuth on the host's own routes
        path = site_path(scope)
        if scope["method"] == "OPTIONS":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if is_below(path, self.api.prefix):
                await self._answer_api_options(scope, path, origin, headers, send)
                return
            if origin is not None and "access-control-request-method" in headers:
                policy = await self._policy(scope, path, origin)
                if policy is not None:
                    await _send_empty(send, _cors_headers(policy, origin, preflight=True))
                    return
        else:  # the usual case: only the Origin is needed, read without a header object
            origin = _origin(scope)
        # A control character (`%0A` decoded) is a path a host's router may not match: Starlette's
        # `Mount` pattern stops at a newline, and the host then answers a plain-text 404. Such a path
        # under the API goes to the API itself, which answers it with its error envelope.
        target = self.api if _CONTROL.search(path) and is_below(path, self.api.prefix) else self.app
        await target(scope, receive, self._decorating(scope, path, origin, send))

    async def _answer_api_options(
        self, scope: Scope, path: str, origin: str | None, headers: Headers, send: Send
    ) -> None:
        """OPTIONS under the API: always 204, never counted (it only shows the client's rate state)."""
        policy = await self._policy(scope, path, origin)
        answer = _cors_headers(policy, origin, preflight="access-control-request-method" in headers)
        await _send_empty(send, (*answer, *(await self.api.options_headers(scope)).items()))

    def _decorating(self, scope: Scope, path: str, origin: str | None, send: Send) -> Send:
        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                policy = self._policy_at_hand(scope, path, origin)
                if policy is _TO_READ:
                    policy = await self._policy(scope, path, origin)
                if policy is not None:
                    headers = MutableHeaders(scope=message)
                    for key, value in _cors_headers(policy, origin, preflight=False):
                        if key == "Vary":
                            headers.add_vary_header(value)
                        else:
                            headers[key] = value
            await send(message)

        return send_with_cors

    async def _policy(self, scope: Scope, path: str, origin: str | None) -> CorsPolicy | None:
        """The policy that applies to this answer, or None while CORS is silent for it."""
        snapshot = scope.get(SNAPSHOT_SCOPE_KEY)
        if not isinstance(snapshot, Snapshot):
            # Without an Origin only `Vary` is at stake: the snapshot at hand will do, no query for it.
            snapshot = self.api.snapshots.current if origin is None else await self._read_snapshot()
        return self._policy_of(snapshot, path)

    def _policy_at_hand(self, scope: Scope, path: str, origin: str | None) -> Any:
        """`_policy` when it needs no query (the usual case), without a coroutine; else `_TO_READ`."""
        snapshot = scope.get(SNAPSHOT_SCOPE_KEY)
        if not isinstance(snapshot, Snapshot):
            if origin is not None:
                return _TO_READ
            snapshot = self.api.snapshots.current
        return self._policy_of(snapshot, path)

    def _policy_of(self, snapshot: Snapshot | None, path: str) -> CorsPolicy | None:
        if snapshot is None:
            return None
        policy = policy_of(snapshot)  # looked at first: no clock read while no origin is configured
        if not policy.enabled or snapshot.is_dormant():
            return None
        return policy if policy.covers_path(path) else None

    async def _read_snapshot(self) -> Snapshot | None:
        """The current snapshot; if the database fails, the answer goes out without CORS headers."""
        try:
            snapshot = await self.api.snapshot()
        except Exception as error:
            if not self._read_failed:
                log.warning(
                    "pb_headless: CORS headers left out, the settings could not be read (%s)",
                    type(error).__name__,
                )
            self._read_failed = True
            return None
        self._read_failed = False
        return snapshot


def _origin(scope: Scope) -> str | None:
    """The first Origin header, as `Headers.get` gives it."""
    for name, value in scope["headers"]:
        if name == b"origin":
            return str(value.decode("latin-1"))
    return None


def _cors_headers(policy: CorsPolicy | None, origin: str | None, *, preflight: bool) -> HeaderPairs:
    """`Vary: Origin` on every answer of a CORS path, plus the policy's headers for an allowed origin."""
    if policy is None:
        return ()
    if origin is None or not policy.is_allowed_origin(origin):
        return (("Vary", "Origin"),)
    granted = policy.preflight_headers(origin) if preflight else policy.answer_headers(origin)
    return (("Vary", "Origin"), *granted)


async def _send_empty(send: Send, headers: HeaderPairs) -> None:
    raw = [(key.lower().encode("latin-1"), value.encode("latin-1")) for key, value in headers]
    await send({"type": "http.response.start", "status": 204, "headers": raw})
    await send({"type": "http.response.body", "body": b""})
