"""A schema for filters across relations (docs/query.md, "Filters across relations").

Posts have an author (to-one), tags (many-to-many through `rf_post_tags`) and comments (to-many).
Author 3 and the tag `hidden` are unpublished; a comment flagged as spam is outside the comments'
`query`; the authors' `email` is a column their object does not publish.
"""

from __future__ import annotations

from datetime import date

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of

metadata = sa.MetaData()

authors = sa.Table(
    "rf_authors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(100), nullable=False, index=True),
    sa.Column("karma", sa.Integer, nullable=True, index=True),
    sa.Column("joined", sa.Date, nullable=True, index=True),
    sa.Column("email", sa.String(200), nullable=True, index=True),
    sa.Column("published", sa.Boolean, nullable=False),
)
posts = sa.Table(
    "rf_posts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("title", sa.String(100), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("rf_authors.id"), nullable=True, index=True),
    sa.Column("published", sa.Boolean, nullable=False),
)
tags = sa.Table(
    "rf_tags",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("slug", sa.String(50), nullable=False, index=True),
    sa.Column("weight", sa.Integer, nullable=True, index=True),
    sa.Column("published", sa.Boolean, nullable=False),
)
post_tags = sa.Table(
    "rf_post_tags",
    metadata,
    sa.Column("post_id", sa.Integer, sa.ForeignKey("rf_posts.id"), primary_key=True),
    sa.Column("tag_id", sa.Integer, sa.ForeignKey("rf_tags.id"), primary_key=True),
    sa.Index("ix_rf_post_tags_tag_post", "tag_id", "post_id"),
)
comments = sa.Table(
    "rf_comments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("post_id", sa.Integer, sa.ForeignKey("rf_posts.id"), nullable=False, index=True),
    sa.Column("body", sa.String(200), nullable=False, index=True),
    sa.Column("spam", sa.Boolean, nullable=False),
)

ROWS = {
    authors: [
        {"id": 1, "name": "Ann", "karma": 10, "joined": date(2020, 1, 1), "email": "ann@secret.test"},
        {"id": 2, "name": "Bob", "karma": None, "joined": None, "email": "bob@secret.test"},
        {"id": 3, "name": "Zed", "karma": 99, "joined": date(2021, 5, 5), "email": "zed@secret.test"},
    ],
    posts: [
        {"id": 1, "title": "Alpha", "author_id": 1, "published": True},
        {"id": 2, "title": "Beta", "author_id": 2, "published": True},
        {"id": 3, "title": "Gamma", "author_id": None, "published": True},
        {"id": 4, "title": "Delta", "author_id": 3, "published": True},
        {"id": 5, "title": "Epsilon", "author_id": 1, "published": False},
        {"id": 6, "title": "Zeta", "author_id": 1, "published": True},
    ],
    tags: [
        {"id": 1, "slug": "news", "weight": 1, "published": True},
        {"id": 2, "slug": "sport", "weight": 2, "published": True},
        {"id": 3, "slug": "tech", "weight": None, "published": True},
        {"id": 4, "slug": "hidden", "weight": 5, "published": False},
    ],
    post_tags: [
        {"post_id": 1, "tag_id": 1},
        {"post_id": 1, "tag_id": 2},
        {"post_id": 2, "tag_id": 1},
        {"post_id": 4, "tag_id": 4},
        {"post_id": 5, "tag_id": 2},
        {"post_id": 6, "tag_id": 1},
        {"post_id": 6, "tag_id": 2},
        {"post_id": 6, "tag_id": 3},
    ],
    comments: [
        {"id": 1, "post_id": 1, "body": "great", "spam": False},
        {"id": 2, "post_id": 1, "body": "great too", "spam": False},
        {"id": 3, "post_id": 2, "body": "buy pills", "spam": True},
    ],
}

PATHS = [
    "author.name",
    "author.karma",
    "author.joined",
    "tags.slug",
    "tags.weight",
    "comments.body",
]
DECLARATIONS = {
    "posts": {
        "model": posts,
        "fields": ["title", "author_id"],
        "filterable": ["title", *PATHS, "author.email"],
        "searchable": ["title"],
        "sortable": ["title"],
        "with": ["author", "tags", "comments"],
    },
    "authors": {"model": authors, "fields": ["name", "karma", "joined"], "filterable": ["name"]},
    "tags": {"model": tags, "fields": ["slug", "weight"]},
    "comments": {
        "model": comments,
        "fields": ["post_id", "body"],
        "query": lambda statement: statement.where(comments.c.spam == sa.false()),
    },
}


def relation_registry() -> ApiRegistry:
    registry = ApiRegistry()
    for name, declaration in DECLARATIONS.items():
        registry.register(name, declaration)
    return registry


async def create_schema(database: Database) -> None:
    dialect = dialect_of(database)
    for table in metadata.sorted_tables:
        await database.execute(str(CreateTable(table).compile(dialect=dialect)))
        for index in table.indexes:
            await database.execute(str(sa.schema.CreateIndex(index).compile(dialect=dialect)))
    for table, rows in ROWS.items():
        for row in rows:
            if table is authors:  # author 3 is unpublished
                row = {**row, "published": row["id"] != 3}
            await database.execute(table.insert().values(**row))
