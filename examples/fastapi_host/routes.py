"""The record shop's custom route, served under /api/pb/v1 next to the generic endpoints."""

import sqlalchemy as sa

from examples.fastapi_host.models import records
from pb_headless import route


@route("GET", "/records/genres", guard="ApiAuth:records.read")
async def genres(request):
    """Published records per genre, with the acting staff member who asked."""
    query = (
        sa.select(records.c.genre, sa.func.count().label("records"))
        .where(records.c.published.is_(True))
        .group_by(records.c.genre)
        .order_by(records.c.genre)
    )
    rows = await request.state.database.fetch_all(query)
    user = request.state.user
    return {"data": [dict(row._mapping) for row in rows], "asked_by": user["username"] if user else None}
