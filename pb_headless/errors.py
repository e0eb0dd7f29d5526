"""Every error the API can answer with, and the one function that renders them.

The hierarchy (status and `error` code; docs/errors.md is the reference)::

    ApiError                         500 server_error
    ├── BadRequest                   400 bad_request
    ├── Unauthorized                 401 unauthorized      (+ WWW-Authenticate)
    ├── Forbidden                    403 forbidden         (+ required_scope)
    ├── NotFound                     404 not_found
    │   └── UnknownObject            404 unknown_object
    ├── MethodNotAllowed             405 method_not_allowed (+ Allow)
    ├── IdempotencyInProgress        409 idempotency_in_progress (+ Retry-After)
    ├── RequestTimeout               408 request_timeout
    ├── CursorExpired                410 cursor_expired
    ├── PreconditionFailed           412 precondition_failed
    ├── PayloadTooLarge              413 payload_too_large
    ├── UnsupportedMediaType         415 unsupported_media_type
    ├── ValidationFailed             422 validation_failed (+ details)
    ├── IdempotencyKeyReused         422 idempotency_key_reused
    ├── RateLimited                  429 rate_limited      (+ Retry-After)
    └── ServiceUnavailable           503 service_unavailable (+ Retry-After)

Integrators raise these from custom routes; the API turns them into the error envelope
`{"error": <code>, "message": <text>}`. Nothing else ever reaches a response body: an unexpected
exception becomes a 500 that carries only a request id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from starlette.responses import Response

from pb_headless.http.responses import NO_STORE, json_bytes

WWW_AUTHENTICATE = 'Bearer realm="pb_headless"'


class ApiError(Exception):
    """Base of every answered error; subclasses set the status and code."""

    status_code: ClassVar[int] = 500
    code: ClassVar[str] = "server_error"
    default_message: ClassVar[str] = "The server could not answer this request."

    def __init__(
        self, message: str | None = None, *, headers: Mapping[str, str] | None = None, **extra: Any
    ) -> None:
        self.message = message or self.default_message
        self.headers = dict(headers or {})
        self.extra = extra
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.extra}


class BadRequest(ApiError):
    status_code = 400
    code = "bad_request"
    default_message = "The request is malformed."


class Unauthorized(ApiError):
    status_code = 401
    code = "unauthorized"
    default_message = "A valid API token is required."

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.headers.setdefault("WWW-Authenticate", WWW_AUTHENTICATE)
        self.headers.setdefault("Cache-Control", NO_STORE)


class Forbidden(ApiError):
    status_code = 403
    code = "forbidden"
    default_message = "The token lacks the scope this operation requires."

    def __init__(self, required_scope: str, message: str | None = None) -> None:
        super().__init__(
            message or f"This operation requires the scope '{required_scope}'.",
            headers={"Cache-Control": NO_STORE},
            required_scope=required_scope,
        )


class NotFound(ApiError):
    status_code = 404
    code = "not_found"
    default_message = "Nothing was found at this address."


class UnknownObject(NotFound):
    code = "unknown_object"
    default_message = "There is no such object."


class MethodNotAllowed(ApiError):
    status_code = 405
    code = "method_not_allowed"
    default_message = "This method is not allowed here."

    def __init__(self, allowed: Iterable[str], message: str | None = None) -> None:
        allow = ", ".join(sorted(set(allowed)))
        super().__init__(
            message or f"This method is not allowed here; allowed: {allow}.", headers={"Allow": allow}
        )


class IdempotencyInProgress(ApiError):
    status_code = 409
    code = "idempotency_in_progress"
    default_message = "A request with this Idempotency-Key is still running; retry shortly."

    def __init__(self, message: str | None = None, *, retry_after: int = 1) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after)})


class RequestTimeout(ApiError):
    status_code = 408
    code = "request_timeout"
    default_message = "The request body did not arrive in time."


class CursorExpired(ApiError):
    status_code = 410
    code = "cursor_expired"
    default_message = (
        "The change log no longer reaches back to this cursor: sync in full, then follow the changes "
        "from the cursor an answer without 'since' gives."
    )


class PreconditionFailed(ApiError):
    status_code = 412
    code = "precondition_failed"
    default_message = "The record has changed since the version named in If-Match."


class PayloadTooLarge(ApiError):
    status_code = 413
    code = "payload_too_large"
    default_message = "The request body is larger than 1 MiB."


class UnsupportedMediaType(ApiError):
    status_code = 415
    code = "unsupported_media_type"
    default_message = "The request body must be JSON (Content-Type: application/json)."


class ValidationFailed(ApiError):
    status_code = 422
    code = "validation_failed"
    default_message = "The given data was invalid."

    def __init__(self, details: Mapping[str, list[str]], message: str | None = None) -> None:
        super().__init__(message, details={str(field): list(messages) for field, messages in details.items()})


class IdempotencyKeyReused(ApiError):
    status_code = 422
    code = "idempotency_key_reused"
    default_message = "This Idempotency-Key was used for another request (another path or body)."


class RateLimited(ApiError):
    status_code = 429
    code = "rate_limited"
    default_message = "Too many requests; slow down."

    def __init__(self, retry_after: int, message: str | None = None) -> None:
        super().__init__(
            message or f"Too many requests; retry in {retry_after} seconds.",
            headers={"Retry-After": str(retry_after)},
        )


class ServiceUnavailable(ApiError):
    status_code = 503
    code = "service_unavailable"
    default_message = "The service is temporarily unavailable; try again shortly."

    def __init__(self, message: str | None = None, *, retry_after: int = 1, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.headers.setdefault("Retry-After", str(retry_after))


class ServerError(ApiError):
    """An unexpected failure; the body names only the request id the log line carries."""

    def __init__(self, request_id: str) -> None:
        super().__init__(f"An unexpected error occurred (request id {request_id}).", request_id=request_id)


def error_response(error: ApiError, headers: Mapping[str, str] | None = None) -> Response:
    """The one renderer of the error envelope."""
    merged = {**error.headers, **(headers or {})}
    return Response(
        json_bytes(error.body()), status_code=error.status_code, headers=merged, media_type="application/json"
    )
