"""The example site's custom API routes, served under /api/pb/v1 next to the generic endpoints."""

import sqlalchemy as sa
from core.App.models import articles

from pb_headless import route


@route("GET", "/reports/categories", guard="ApiAuth:articles.read")
async def categories(request):
    """Published articles per category."""
    database = request.app.state.database
    query = (
        sa.select(articles.c.category, sa.func.count().label("articles"))
        .where(articles.c.published.is_(True))
        .group_by(articles.c.category)
        .order_by(articles.c.category)
    )
    rows = await database.fetch_all(query)
    return {"data": [{"category": row[0], "articles": row[1]} for row in rows]}
