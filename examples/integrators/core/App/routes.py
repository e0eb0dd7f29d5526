"""The site's custom routes: what the generic registry does not do, such as aggregating two tables."""

from datetime import date

import sqlalchemy as sa
from core.App.models import orders, products

from pb_headless import ValidationFailed, route


@route("GET", "/reports/sales", guard="ApiAuth:reports.read")
async def sales_by_category(request):
    """Units sold and revenue per product category, optionally since a date."""
    # Casts give every database the same types back: MariaDB's SUM of integers is a DECIMAL.
    units = sa.cast(sa.func.sum(orders.c.quantity), sa.Integer)
    revenue = sa.cast(sa.func.sum(orders.c.quantity * products.c.price), sa.Numeric(12, 2))
    query = (
        sa.select(
            products.c.category,
            sa.func.count(orders.c.id).label("orders"),
            units.label("units"),
            revenue.label("revenue"),
        )
        .select_from(orders.join(products, orders.c.product_id == products.c.id))
        .group_by(products.c.category)
        .order_by(products.c.category)
    )
    since = request.query_params.get("since")
    if since is not None:
        try:
            query = query.where(orders.c.ordered_on >= date.fromisoformat(since))
        except ValueError:
            raise ValidationFailed({"since": ["must be a date of the form YYYY-MM-DD"]}) from None
    rows = await request.state.database.fetch_all(query)
    user = request.state.user  # the token's acting user, from the host's user loader (or None)
    return {
        "data": [dict(row._mapping) for row in rows],
        "meta": {"since": since, "requested_by": user["username"] if user else None},
    }
