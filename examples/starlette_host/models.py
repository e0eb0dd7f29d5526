"""The bookshop's own table, and the rows a fresh shop starts with."""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable

metadata = sa.MetaData()

books = sa.Table(
    "shop_books",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("author", sa.String(100), nullable=False),
    sa.Column("year", sa.Integer, nullable=True),
    sa.Column("price", sa.Numeric(8, 2), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

FIRST_BOOKS = [
    {"title": "The Left Hand of Darkness", "author": "Le Guin", "year": 1969, "price": Decimal("9.50")},
    {"title": "Solaris", "author": "Lem", "year": 1961, "price": Decimal("12.00")},
    {"title": "Roadside Picnic", "author": "Strugatsky", "year": 1972, "price": Decimal("8.25")},
    {"title": "Draft", "author": "Anonymous", "year": None, "price": None, "published": False},
]


async def prepare(database: Database) -> None:
    """Create the shop's table and, on a fresh database, its first books."""
    await database.execute(CreateTable(books, if_not_exists=True))
    if not await database.fetch_val(sa.select(sa.func.count()).select_from(books)):
        for row in FIRST_BOOKS:
            await database.execute(books.insert().values(**{"published": True, **row}))
