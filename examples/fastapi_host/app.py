"""The record shop as a FastAPI application: its own pages, the API mounted at /api/pb/v1.

Run it with `uvicorn examples.fastapi_host.app:app` or `python -m examples.fastapi_host`.
"""

from __future__ import annotations

import html
import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import sqlalchemy as sa
from databases import Database
from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse

from examples.fastapi_host import routes
from examples.fastapi_host.models import prepare, records, staff
from pb_headless import ApiAuth, ApiRegistry, CORSMiddleware, HeadlessAPI, NotFound, Principal, install

HERE = Path(__file__).resolve().parent


def database_url() -> str:
    return os.environ.get("PB_DATABASE_URL") or f"sqlite:///{HERE / 'recordshop.db'}"


def create_app(url: str | None = None) -> FastAPI:
    database = Database(url or database_url())

    async def load_staff_member(user_id: str) -> dict[str, Any] | None:
        """The acting user of a token: an active staff member, or None (the token then answers 401)."""
        if not user_id.isdigit():
            return None
        query = sa.select(staff).where(staff.c.id == int(user_id), staff.c.active.is_(True))
        row = await database.fetch_one(query)
        return dict(row._mapping) if row is not None else None

    registry = ApiRegistry().load_file(HERE / "api.py")
    api = HeadlessAPI(database, registry, routes=[routes], user_loader=load_staff_member)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await database.connect()
        await install(database)
        await prepare(database)
        await api.startup()
        yield
        await api.shutdown()
        await database.disconnect()

    app = FastAPI(title="Record shop", lifespan=lifespan)

    @app.get("/", response_class=HTMLResponse)
    async def home() -> str:
        """The shop's own page: server-rendered, no token, untouched by the API."""
        rows = await database.fetch_all(sa.select(records.c.title).where(records.c.published.is_(True)))
        items = "".join(f"<li>{html.escape(row.title)}</li>" for row in rows)
        return f"<!doctype html><title>Record shop</title><h1>Record shop</h1><ul>{items}</ul>"

    @app.get("/reports/records/{record_id}")
    async def record_report(
        record_id: int,
        request: Request,
        principal: Annotated[Principal, Depends(ApiAuth("records.read").dependency)],
    ) -> dict[str, Any]:
        """A host route outside the API, guarded by ApiAuth as a FastAPI dependency."""
        row = await database.fetch_one(sa.select(records).where(records.c.id == record_id))
        if row is None or not row.published:
            raise NotFound(f"There is no record {record_id}.")  # rendered as the API's error envelope
        return {
            "title": row.title,
            "price": str(row.price),
            "token": principal.token.name,
            "acting_user": request.state.user["username"] if request.state.user else None,
        }

    app.mount("/api/pb/v1", api)
    # Outermost among the app's middleware, so preflights under the API never reach FastAPI's routing.
    app.add_middleware(CORSMiddleware, api=api)
    return app


app = create_app()
