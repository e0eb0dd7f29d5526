"""A POST under an `Idempotency-Key`: run once, then answered again from what was kept.

Same token value (its hash: `owner`), key, path and body as a kept answer → that answer again with
`Idempotent-Replayed: true`, nothing written. Same key with another path or body → 422. While the
first request runs → 409 with `Retry-After`. An answer of 500 or more is not kept, so the client's
retry runs (docs/caching.md).

A create keeps its answer inside its own write transaction (`Claim.keep`), so the answer commits if
and only if the row does: a process that dies between the two cannot leave a row whose retry writes
it again. Answers that write nothing (a 4xx) are kept after the request, as is whatever a handler
did not keep itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson
from databases import Database
from starlette.requests import Request
from starlette.responses import Response

from pb_headless.errors import (
    ApiError,
    BadRequest,
    IdempotencyInProgress,
    IdempotencyKeyReused,
    error_response,
)
from pb_headless.http.conditional import OBJECT_VARY
from pb_headless.http.responses import OBJECT_CACHING
from pb_headless.idempotency import store

HEADER = "idempotency-key"
REPLAYED = "Idempotent-Replayed"
_KEY = re.compile(r"[\x21-\x7e]{1,255}")  # visible ASCII: no spaces, no controls
_KEPT_HEADERS = ("location", "etag", "content-type", "x-truncated-relations")


@dataclass(slots=True)
class Claim:
    """This request's hold on its key, handed to the handler so it can keep its answer in its write."""

    database: Database
    owner: str
    key: str
    kept: bool = False

    async def keep(self, response: Response) -> None:
        """Keep `response` now, inside the caller's write transaction: it commits with the write, and a
        rollback takes it back (the claim then has no answer and is released)."""
        if response.status_code < 500:
            await store.keep(self.database, self.owner, self.key, response.status_code, _kept(response))
            self.kept = True


async def once(
    database: Database,
    request: Request,
    owner: str,
    body: bytes,
    run: Callable[[Claim | None], Awaitable[Response]],
) -> Response:
    """`run(claim)`'s answer, or the kept answer of the same request sent earlier with the same key."""
    keys = request.headers.getlist(HEADER)
    if not keys:
        return await run(None)
    if len(keys) > 1:  # which one the client meant is a guess either way
        raise BadRequest("Send one Idempotency-Key header, not several.")
    key = keys[0]
    if not _KEY.fullmatch(key):
        raise BadRequest("The Idempotency-Key header must be 1 to 255 visible ASCII characters.")
    request_hash = _request_hash(request, body)
    found = await store.claim(database, owner, key, request_hash)
    if found is not None:
        return _repeat(found, request_hash)
    claim = Claim(database, owner, key)
    try:
        response = await run(claim)
    except ApiError as error:
        if error.status_code >= 500:
            await _release(database, owner, key)
            raise
        response = error_response(error)  # a client error is the answer too: kept like any other
        claim.kept = False  # what a failed transaction kept was rolled back with it
    except BaseException:
        await _release(database, owner, key)
        raise
    if response.status_code >= 500:
        await _release(database, owner, key)
        return response
    if not claim.kept:
        await store.keep(database, owner, key, response.status_code, _kept(response))
    await store.prune(database, store.now())  # bounded, and outside any write's transaction
    return response


def _request_hash(request: Request, body: bytes) -> str:
    """What must be the same for a repeat: method, path with its query, and the body's bytes."""
    digest = hashlib.sha256()
    for part in (request.method.encode(), request.url.path.encode(), request.url.query.encode()):
        digest.update(len(part).to_bytes(8, "big") + part)
    digest.update(body)
    return digest.hexdigest()


def _kept(response: Response) -> str:
    headers = {name: value for name, value in response.headers.items() if name in _KEPT_HEADERS}
    return orjson.dumps({"body": bytes(response.body).decode("utf-8"), "headers": headers}).decode()


def _repeat(found: store.Kept, request_hash: str) -> Response:
    if found.request_hash != request_hash:
        raise IdempotencyKeyReused()
    if found.status is None or found.answer is None:
        raise IdempotencyInProgress()
    kept = orjson.loads(found.answer)
    headers = {**kept["headers"], REPLAYED: "true"}
    headers.setdefault("cache-control", OBJECT_CACHING)
    headers.setdefault("vary", OBJECT_VARY)  # answers kept before writes carried it
    return Response(kept["body"].encode("utf-8"), status_code=found.status, headers=headers)


async def _release(database: Database, owner: str, key: str) -> None:
    # When the database is away, the release fails too; the claim then expires after RUNNING_FOR.
    with contextlib.suppress(Exception):
        await store.release(database, owner, key)
