"""What a handler works with: one value per request, built after authentication, that handlers only
read. It is not a frozen dataclass: a frozen one's `__init__` sets each field through
`object.__setattr__`, about 14,000 instructions for this one on every request (docs/performance.md,
"The fixed cost of a request (fourth round)").

Handlers read their inputs from here (and the raw query from the request), never from the
application object or `request.state`; `request.state` is filled only for integrators' endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from databases import Database

from pb_headless.auth import Principal
from pb_headless.custom_routes import RouteDef
from pb_headless.database.caches import Caches
from pb_headless.database.deadline import UnitOfWork
from pb_headless.http.body import Body
from pb_headless.ratelimit import RateDecision
from pb_headless.state.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class ApiInfo:
    """What the API says about itself in its OpenAPI document."""

    title: str
    version: str
    routes: tuple[RouteDef, ...]


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention, hashed as a frozen one would be
class RequestContext:
    database: Database
    dialect: str  # sqlite | postgresql | mysql
    api_root: str  # absolute address of the API, for links and `servers`
    principal: Principal
    snapshot: Snapshot  # the catalog and settings of the version this request read
    rate: RateDecision
    body: Body  # read before any connection was taken
    info: ApiInfo
    caches: Caches  # what the API object keeps between requests (database/caches.py)
    data_version: int | None  # read with the token: which kept counts still hold
    changes: Any = None  # pb_headless.changes.ChangeHub: this instance's change log and streams
    unit: UnitOfWork | None = None  # the request's unit of work: its connection, commit and answer
