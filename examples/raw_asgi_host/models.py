"""The recipe site's own table, and the rows a fresh site starts with."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable

metadata = sa.MetaData()

recipes = sa.Table(
    "site_recipes",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("minutes", sa.Integer, nullable=True),
    sa.Column("vegetarian", sa.Boolean, nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

FIRST_RECIPES = [
    {"title": "Borscht", "minutes": 90, "vegetarian": True},
    {"title": "Pelmeni", "minutes": 120, "vegetarian": False},
    {"title": "Syrniki", "minutes": 30, "vegetarian": True},
    {"title": "Secret family stew", "minutes": 240, "vegetarian": False, "published": False},
]


async def prepare(database: Database) -> None:
    """Create the site's table and, on a fresh database, its first recipes."""
    await database.execute(CreateTable(recipes, if_not_exists=True))
    if not await database.fetch_val(sa.select(sa.func.count()).select_from(recipes)):
        for row in FIRST_RECIPES:
            await database.execute(recipes.insert().values(**{"published": True, **row}))
