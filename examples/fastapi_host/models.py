"""The record shop's own tables: its records and the staff who act through API tokens."""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable

metadata = sa.MetaData()

records = sa.Table(
    "shop_records",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("artist", sa.String(100), nullable=False),
    sa.Column("genre", sa.String(50), nullable=True),
    sa.Column("price", sa.Numeric(8, 2), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

staff = sa.Table(
    "shop_staff",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("username", sa.String(50), nullable=False, unique=True),
    sa.Column("active", sa.Boolean, nullable=False, default=True),
)

FIRST_RECORDS = [
    {"title": "Kind of Blue", "artist": "Miles Davis", "genre": "jazz", "price": Decimal("21.00")},
    {"title": "Blue Train", "artist": "John Coltrane", "genre": "jazz", "price": Decimal("19.50")},
    {"title": "Unknown Pleasures", "artist": "Joy Division", "genre": "rock", "price": Decimal("24.99")},
    {"title": "Test pressing", "artist": "Nobody", "genre": None, "price": None, "published": False},
]
FIRST_STAFF = [{"username": "clerk", "active": True}, {"username": "former-clerk", "active": False}]


async def prepare(database: Database) -> None:
    """Create the shop's tables and, on a fresh database, its first rows."""
    for table in metadata.sorted_tables:
        await database.execute(CreateTable(table, if_not_exists=True))
    if not await database.fetch_val(sa.select(sa.func.count()).select_from(records)):
        for row in FIRST_RECORDS:
            await database.execute(records.insert().values(**{"published": True, **row}))
        for row in FIRST_STAFF:
            await database.execute(staff.insert().values(**row))
