"""Cross-origin access: the policy built from the `service_cors_*` settings, and the middleware.

The host wraps its whole application in `CORSMiddleware`, so OPTIONS under the API is answered
before the host's routing ever sees it. The policy is compiled once per settings version; a request
only compares its origin against it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pb_headless.auth import API_SCOPE_KEY
from pb_headless.settings import is_on
from pb_headless.tables import DEFAULT_SETTINGS

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI
    from pb_headless.api.snapshot import Snapshot

EXPOSED_HEADERS = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Location"


@dataclass(frozen=True)
class CorsPolicy:
    """The `service_cors_*` settings, parsed; `enabled` is False while no origin is configured."""

    origins: frozenset[str]
    any_origin: bool
    patterns: tuple[re.Pattern[str], ...]
    paths: tuple[re.Pattern[str], ...]
    methods: str
    headers: str
    credentials: bool
    max_age: str

    @property
    def enabled(self) -> bool:
        return self.any_origin or bool(self.origins) or bool(self.patterns)

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> CorsPolicy:
        raw_origins = [o.strip() for o in settings.get("service_cors_origins", "").split(",") if o.strip()]
        exact = frozenset(o.rstrip("/") for o in raw_origins if "*" not in o)
        patterns = tuple(_origin_pattern(o) for o in raw_origins if "*" in o and o != "*")
        paths = settings.get("service_cors_paths", DEFAULT_SETTINGS["service_cors_paths"])
        max_age = settings.get("service_cors_max_age", DEFAULT_SETTINGS["service_cors_max_age"]).strip()
        return cls(
            origins=exact, any_origin="*" in raw_origins,
            patterns=tuple(p for p in patterns if p is not None),
            paths=tuple(re.compile(fnmatch.translate(p.strip().lstrip("/"))) for p in paths.split(",") if p.strip()),
            methods=_list(settings.get("service_cors_methods", DEFAULT_SETTINGS["service_cors_methods"])),
            headers=_list(settings.get("service_cors_headers", DEFAULT_SETTINGS["service_cors_headers"])),
            credentials=is_on(settings.get("service_cors_credentials")),
            max_age=max_age if max_age.isdigit() else DEFAULT_SETTINGS["service_cors_max_age"],
        )

    def covers_path(self, path: str) -> bool:
        relative = path.lstrip("/")
        return any(pattern.match(relative) for pattern in self.paths)

    def is_allowed_origin(self, origin: str) -> bool:
        if self.any_origin or origin in self.origins:
            return True
        return any(pattern.fullmatch(origin) for pattern in self.patterns)

    def origin_headers(self, origin: str) -> dict[str, str]:
        """The headers of an answer to an allowed origin (CONTRACT §7)."""
        if self.any_origin and not self.credentials:
            headers = {"Access-Control-Allow-Origin": "*"}
        elif self.any_origin and self.credentials:
            headers = {"Access-Control-Allow-Origin": "*"}  # browsers refuse `*` with credentials
        else:
            headers = {"Access-Control-Allow-Origin": origin}
            if self.credentials:
                headers["Access-Control-Allow-Credentials"] = "true"
        return headers

    def preflight_headers(self, origin: str) -> dict[str, str]:
        return {**self.origin_headers(origin), "Access-Control-Allow-Methods": self.methods,
                "Access-Control-Allow-Headers": self.headers, "Access-Control-Max-Age": self.max_age}

    def warnings(self) -> list[str]:
        if self.any_origin and self.credentials:
            return ["Origins '*' with credentials on: browsers refuse credentials with '*', so the API answers "
                    "'*' without Access-Control-Allow-Credentials. List the origins to allow credentials."]
        return []


def _origin_pattern(origin: str) -> re.Pattern[str] | None:
    """`https://*.example.com` → any subdomain depth over that scheme, never the bare or look-alike domain."""
    scheme, sep, host = origin.partition("://")
    if not sep or not host.startswith("*.") or "*" in host[2:] or not host[2:]:
        return None
    return re.compile(re.escape(scheme) + r"://(?:[A-Za-z0-9-]+\.)+" + re.escape(host[2:]))


def _list(value: str) -> str:
    return ",".join(part.strip() for part in value.split(",") if part.strip())


def policy_of(snapshot: Snapshot) -> CorsPolicy:
    return snapshot.derive("cors", lambda s: CorsPolicy.from_settings(s.settings))


class CORSMiddleware:
    """Wraps the host: answers OPTIONS under the API before routing, adds CORS headers per §7."""

    def __init__(self, app: ASGIApp, api: HeadlessAPI) -> None:
        self.app = app
        self.api = api

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[API_SCOPE_KEY] = self.api
        path = scope.get("path", "")
        under_api = path == self.api.prefix or path.startswith(self.api.prefix + "/")
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if scope["method"] == "OPTIONS" and under_api:
            await self._preflight(scope, origin, headers, send)
            return
        if origin is None:
            await self.app(scope, receive, send)
            return
        snapshot = await self.api.snapshot()
        policy = policy_of(snapshot)
        if not policy.enabled or not policy.covers_path(path):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and headers.get("access-control-request-method"):
            await self._preflight(scope, origin, headers, send, snapshot)
            return
        extra: dict[str, str] = {}
        if not snapshot.is_dormant() and policy.is_allowed_origin(origin):
            extra = {**policy.origin_headers(origin), "Access-Control-Expose-Headers": EXPOSED_HEADERS}
        await self.app(scope, receive, _with_headers(send, extra))

    async def _preflight(self, scope: Scope, origin: str | None, headers: Headers, send: Send,
                         snapshot: Snapshot | None = None) -> None:
        answer: dict[str, str] = {}
        if origin is not None:
            snapshot = snapshot or await self.api.snapshot()
            policy = policy_of(snapshot)
            if policy.enabled and policy.covers_path(scope.get("path", "")):
                answer["Vary"] = "Origin"
                if (not snapshot.is_dormant() and policy.is_allowed_origin(origin)
                        and headers.get("access-control-request-method")):
                    answer.update(policy.preflight_headers(origin))
                elif not snapshot.is_dormant() and policy.is_allowed_origin(origin):
                    answer.update(policy.origin_headers(origin))
        await send({"type": "http.response.start", "status": 204,
                    "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in answer.items()]})
        await send({"type": "http.response.body", "body": b""})


def _with_headers(send: Send, extra: Mapping[str, str]) -> Any:
    """Adds the CORS headers, and `Vary: Origin` to every answer on a CORS path."""
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for key, value in extra.items():
                headers[key] = value
            headers.add_vary_header("Origin")
        await send(message)
    return send_with_headers
