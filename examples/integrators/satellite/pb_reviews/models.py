"""The component's own table, created by `install` (a site runs it once, like pb_headless.install)."""

import sqlalchemy as sa
from sqlalchemy.schema import CreateTable

metadata = sa.MetaData()

reviews = sa.Table(
    "pb_reviews",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("product_id", sa.Integer, nullable=False),
    sa.Column("rating", sa.Integer, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)


async def install(database):
    """Create the reviews table on the site's `databases.Database`."""
    await database.execute(CreateTable(reviews, if_not_exists=True))
