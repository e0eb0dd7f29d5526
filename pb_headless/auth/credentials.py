"""Reading the token a request carries: `Authorization: Bearer <t>` or `X-API-Key: <t>`."""

from __future__ import annotations

from starlette.datastructures import Headers

from pb_headless.errors import BadRequest


def read_token(headers: Headers) -> str | None:
    """The token, or None when the request carries none.

    Ambiguity is refused with 400 rather than guessed at: two `Authorization` headers, two
    `X-API-Key` headers, or both forms carrying different tokens (docs/authentication.md).
    """
    authorizations: list[str] = []
    api_keys: list[str] = []
    for name, value in headers.raw:  # one pass over the headers for both (`getlist` twice made two)
        if name == b"authorization":
            authorizations.append(value.decode("latin-1"))
        elif name == b"x-api-key":
            api_keys.append(value.decode("latin-1"))
    if len(authorizations) > 1:
        raise BadRequest("The request carries more than one Authorization header; send one.")
    if len(api_keys) > 1:
        raise BadRequest("The request carries more than one X-API-Key header; send one.")
    bearer = _bearer(authorizations[0]) if authorizations else None
    api_key = (api_keys[0].strip() or None) if api_keys else None
    if bearer and api_key and bearer != api_key:
        raise BadRequest("Authorization and X-API-Key carry different tokens; send one.")
    return bearer or api_key


def _bearer(authorization: str) -> str | None:
    scheme, _, value = authorization.strip().partition(" ")
    return (value.strip() or None) if scheme.lower() == "bearer" else None
