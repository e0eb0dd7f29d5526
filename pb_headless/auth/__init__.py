"""Authentication and authorization: who a request runs as, and whether it may do what it asks.

- `credentials`: the token a request carries (both header forms, and the ambiguities refused with 400);
- `authenticator`: the token and the shared version in one query, the dormant rule, the 401s;
- `principal`: the token and acting user a request runs as;
- `guard`: `ApiAuth`, the one scope check for generic endpoints, custom routes and host routes.
Scope matching itself is the pure function `pb_headless.scopes.has_required_scope`.
"""

from pb_headless.auth.authenticator import Authentication, Authenticator, UserLoader
from pb_headless.auth.guard import AUTHENTICATOR_KEY, ApiAuth, render_api_error
from pb_headless.auth.principal import Principal, user_reference

__all__ = [
    "AUTHENTICATOR_KEY",
    "ApiAuth",
    "Authentication",
    "Authenticator",
    "Principal",
    "UserLoader",
    "render_api_error",
    "user_reference",
]
