"""pb_headless: a token-protected headless JSON API for any ASGI content site.

The public names are exactly `__all__` (tests/test_public_api.py compares the two); every module
not re-exported here is an implementation detail. docs/library.md describes each name.

They are imported on first use (PEP 562), not with the package: the console script `pb-headless`
lives in this package, and `pb-headless --help` must not wait for SQLAlchemy, Starlette and the
whole query stack to load. `from pb_headless import HeadlessAPI` works exactly as before.
"""

import importlib as _importlib
import typing as _typing

from pb_headless.release import VERSION as __version__

if _typing.TYPE_CHECKING:
    from pb_headless.api import HeadlessAPI
    from pb_headless.auth import ApiAuth, Principal
    from pb_headless.cors import CORSMiddleware
    from pb_headless.custom_routes import RouteError, route
    from pb_headless.errors import (
        ApiError,
        BadRequest,
        Forbidden,
        MethodNotAllowed,
        NotFound,
        PayloadTooLarge,
        RateLimited,
        RequestTimeout,
        ServiceUnavailable,
        Unauthorized,
        UnknownObject,
        UnsupportedMediaType,
        ValidationFailed,
    )
    from pb_headless.registry import (
        DECLARATION_KEYS,
        ApiRegistry,
        DeclarationError,
        Events,
        OnServiceApiRegister,
    )
    from pb_headless.settings import SettingsStore
    from pb_headless.tables import install
    from pb_headless.tokens import TokenError, TokenInfo, TokenStore
    from pb_headless.webhooks.options import WebhookOptions
    from pb_headless.webhooks.store import WebhookError, WebhookStore

# Each public name and the module that defines it.
_HOMES = {
    "HeadlessAPI": "pb_headless.api",
    "ApiAuth": "pb_headless.auth",
    "Principal": "pb_headless.auth",
    "CORSMiddleware": "pb_headless.cors",
    **dict.fromkeys(
        (
            "ApiError",
            "BadRequest",
            "Forbidden",
            "MethodNotAllowed",
            "NotFound",
            "PayloadTooLarge",
            "RateLimited",
            "RequestTimeout",
            "ServiceUnavailable",
            "Unauthorized",
            "UnknownObject",
            "UnsupportedMediaType",
            "ValidationFailed",
        ),
        "pb_headless.errors",
    ),
    **dict.fromkeys(
        ("DECLARATION_KEYS", "ApiRegistry", "DeclarationError", "Events", "OnServiceApiRegister"),
        "pb_headless.registry",
    ),
    "RouteError": "pb_headless.custom_routes",
    "route": "pb_headless.custom_routes",
    "SettingsStore": "pb_headless.settings",
    "install": "pb_headless.tables",
    "TokenError": "pb_headless.tokens",
    "TokenInfo": "pb_headless.tokens",
    "TokenStore": "pb_headless.tokens",
    "WebhookError": "pb_headless.webhooks.store",
    "WebhookOptions": "pb_headless.webhooks.options",
    "WebhookStore": "pb_headless.webhooks.store",
}


def __getattr__(name: str) -> _typing.Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pb_headless' has no attribute {name!r}")
    value = getattr(_importlib.import_module(home), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = [
    "DECLARATION_KEYS",
    "ApiAuth",
    "ApiError",
    "ApiRegistry",
    "BadRequest",
    "CORSMiddleware",
    "DeclarationError",
    "Events",
    "Forbidden",
    "HeadlessAPI",
    "MethodNotAllowed",
    "NotFound",
    "OnServiceApiRegister",
    "PayloadTooLarge",
    "Principal",
    "RateLimited",
    "RequestTimeout",
    "RouteError",
    "ServiceUnavailable",
    "SettingsStore",
    "TokenError",
    "TokenInfo",
    "TokenStore",
    "Unauthorized",
    "UnknownObject",
    "UnsupportedMediaType",
    "ValidationFailed",
    "WebhookError",
    "WebhookOptions",
    "WebhookStore",
    "__version__",
    "install",
    "route",
]
