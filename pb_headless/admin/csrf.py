"""The CSRF token of the administration pages, kept in the host's session.

One random token per session, put in a hidden `csrf_token` field of every form (or an
`X-CSRF-Token` header) and compared in constant time on every POST. The host's own administration
forms may use the same two functions, so one session carries one token.
"""

from __future__ import annotations

import secrets
from typing import Any

from starlette.requests import Request

SESSION_KEY = "pb_csrf"
FIELD = "csrf_token"
HEADER = "x-csrf-token"


def session_of(request: Request) -> dict[str, Any]:
    """The host's session; the admin pages cannot work without one, so say what is missing."""
    if "session" not in request.scope:
        raise RuntimeError(
            "pb_headless.admin needs a session: wrap the host in "
            "starlette.middleware.sessions.SessionMiddleware (see docs/admin.md)"
        )
    return request.session


def csrf_token(request: Request) -> str:
    """The session's CSRF token, created on first use."""
    session = session_of(request)
    token = session.get(SESSION_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        session[SESSION_KEY] = token
    return token


def rotate_csrf_token(request: Request) -> str:
    """A fresh token, e.g. after a login, so a token seen before the login is worthless."""
    session_of(request).pop(SESSION_KEY, None)
    return csrf_token(request)


def is_valid_csrf(request: Request, submitted: Any) -> bool:
    """Whether a submitted value (form field or header) matches the session's token."""
    expected = session_of(request).get(SESSION_KEY)
    if not isinstance(expected, str) or not expected:
        return False
    candidate = submitted if isinstance(submitted, str) and submitted else request.headers.get(HEADER, "")
    return secrets.compare_digest(candidate.encode(), expected.encode())
