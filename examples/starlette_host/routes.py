"""The bookshop's custom route, served under /api/pb/v1 next to the generic endpoints."""

import sqlalchemy as sa

from examples.starlette_host.models import books
from pb_headless import route


@route("GET", "/books/stats", guard="ApiAuth:books.read")
async def book_stats(request):
    """How many books the shop publishes, and their price range."""
    query = sa.select(
        sa.func.count().label("books"),
        sa.func.min(books.c.price).label("cheapest"),
        sa.func.max(books.c.price).label("dearest"),
    ).where(books.c.published.is_(True))
    row = await request.state.database.fetch_one(query)
    return {"data": dict(row._mapping), "asked_by": request.state.token.name}
