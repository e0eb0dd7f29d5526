"""pb_headless: a token-protected headless JSON API for any ASGI content site.

The public names are listed in `__all__` and pinned by tests/test_public_api.py.
"""

__version__ = "0.1.0"

from pb_headless.api import HeadlessAPI  # noqa: E402
from pb_headless.auth import ApiAuth, Principal  # noqa: E402
from pb_headless.cors import CORSMiddleware  # noqa: E402
from pb_headless.errors import (  # noqa: E402
    ApiError,
    BadRequest,
    Forbidden,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServiceUnavailable,
    Unauthorized,
    UnknownObject,
    UnsupportedMediaType,
    ValidationFailed,
)
from pb_headless.registry import (  # noqa: E402
    DECLARATION_KEYS,
    ApiRegistry,
    DeclarationError,
    Events,
    OnServiceApiRegister,
)
from pb_headless.routes import route  # noqa: E402
from pb_headless.settings import SettingsStore  # noqa: E402
from pb_headless.tables import install  # noqa: E402
from pb_headless.tokens import TokenError, TokenInfo, TokenStore  # noqa: E402

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
