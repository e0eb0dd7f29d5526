"""The recipe site's custom route, served under /api/pb/v1 next to the generic endpoints."""

import sqlalchemy as sa

from examples.raw_asgi_host.models import recipes
from pb_headless import ValidationFailed, route


@route("GET", "/recipes/quick", guard="ApiAuth")
async def quick_recipes(request):
    """Published recipes ready within `?minutes=` (30 by default); any live token may ask."""
    raw = request.query_params.get("minutes", "30")
    if not raw.isdigit() or not 0 < int(raw) <= 1440:
        raise ValidationFailed({"minutes": ["must be a whole number of minutes between 1 and 1440"]})
    query = (
        sa.select(recipes.c.id, recipes.c.title, recipes.c.minutes)
        .where(recipes.c.published.is_(True), recipes.c.minutes <= int(raw))
        .order_by(recipes.c.minutes)
    )
    rows = await request.state.database.fetch_all(query)
    return {"data": [dict(row._mapping) for row in rows], "meta": {"minutes": int(raw)}}
