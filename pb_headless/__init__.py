"""pb_headless: a token-protected headless JSON API for any ASGI content site.

The public names are exactly `__all__` (tests/test_public_api.py compares the two); every module
not re-exported here is an implementation detail. docs/library.md describes each name.
"""

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
from pb_headless.release import VERSION as __version__
from pb_headless.settings import SettingsStore
from pb_headless.tables import install
from pb_headless.tokens import TokenError, TokenInfo, TokenStore

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
    "__version__",
    "install",
    "route",
]
