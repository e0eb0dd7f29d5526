"""The shop's tables: products are published through the API, orders stay private."""

import sqlalchemy as sa

metadata = sa.MetaData()

products = sa.Table(
    "shop_products",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("category", sa.String(50), nullable=False),
    sa.Column("price", sa.Numeric(10, 2), nullable=False),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

orders = sa.Table(
    "shop_orders",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("product_id", sa.Integer, sa.ForeignKey("shop_products.id"), nullable=False),
    sa.Column("quantity", sa.Integer, nullable=False),
    sa.Column("ordered_on", sa.Date, nullable=False),
)
