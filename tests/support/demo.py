"""The demo schema every feature test can use: authors, articles with every kind of field, comments."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of

metadata = sa.MetaData()

authors = sa.Table(
    "demo_authors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("email", sa.String(200), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

articles = sa.Table(
    "demo_articles",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.Text, nullable=True),
    sa.Column("category", sa.String(50), nullable=True),
    sa.Column("price", sa.Numeric(10, 2), nullable=True),
    sa.Column("rating", sa.Float, nullable=True),
    sa.Column("views", sa.Integer, nullable=True),
    sa.Column("featured", sa.Boolean, nullable=True),
    sa.Column("published_on", sa.Date, nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=True),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("demo_authors.id"), nullable=True),
    sa.Column("secret", sa.String(100), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
    sa.Column("created_by", sa.String(64), nullable=True),
    sa.Column("updated_by", sa.String(64), nullable=True),
)

comments = sa.Table(
    "demo_comments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("article_id", sa.Integer, sa.ForeignKey("demo_articles.id"), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

AUTHORS = [
    {"id": 1, "name": "Anna", "email": "anna@example.com", "published": True},
    {"id": 2, "name": "Boris", "email": None, "published": True},
    {"id": 3, "name": "Hidden", "email": "hidden@example.com", "published": False},
]


def _article(id_: int, title: str, **values: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": id_,
        "title": title,
        "body": f"Body of {title}",
        "category": "news",
        "price": Decimal("10.00"),
        "rating": 4.5,
        "views": id_ * 10,
        "featured": id_ % 2 == 0,
        "published_on": date(2026, 1, id_),
        "created_at": datetime(2026, 1, id_, 12, 0, tzinfo=UTC).replace(tzinfo=None),
        "author_id": 1,
        "secret": f"secret-{id_}",
        "published": True,
    }
    row.update(values)
    return row


ARTICLES = [
    _article(1, "Hello world", category="news", price=Decimal("19.99")),
    _article(2, "Новости компании", category="company", body="Большие новости", author_id=2),
    _article(3, "Sale: 50% off_today", category="sales", price=Decimal("5.50"), body="back\\slash here"),
    _article(4, "Quarterly report", category="company", price=None, rating=None, views=None, author_id=None),
    _article(5, "Draft article", published=False),
    _article(6, "Lorem ipsum dolor", category="news", body="lorem ipsum sit amet", price=Decimal("100.00")),
    _article(7, "Second hello", category="news", featured=None, published_on=None),
]

COMMENTS = [
    {"id": 1, "article_id": 1, "body": "First!", "published": True},
    {"id": 2, "article_id": 1, "body": "Nice", "published": True},
    {"id": 3, "article_id": 1, "body": "spam", "published": False},
    {"id": 4, "article_id": 2, "body": "Отлично", "published": True},
]

DECLARATIONS = {
    "articles": {
        "model": articles,
        "fields": [
            "title",
            "body",
            "category",
            "price",
            "rating",
            "views",
            "featured",
            "published_on",
            "created_at",
            "author_id",
        ],
        "filterable": [
            "id",
            "title",
            "category",
            "price",
            "rating",
            "views",
            "featured",
            "published_on",
            "created_at",
            "author_id",
        ],
        "searchable": ["title", "body"],
        "sortable": ["id", "title", "price", "views", "published_on", "created_at"],
        "with": ["author:id,name", "comments:id,body"],
        "per_page": 5,
        "max_per_page": 6,
        "operations": ["list", "show", "create", "update", "delete"],
        "writable": [
            "title",
            "body",
            "category",
            "price",
            "rating",
            "views",
            "featured",
            "published_on",
            "created_at",
            "author_id",
            "published",
        ],
        "rules": {"title": "required|string|max:200", "category": "nullable|in:news,company,sales"},
    },
    "authors": {
        "model": authors,
        "fields": ["name", "email"],
        "filterable": ["name"],
        "sortable": ["name"],
        "searchable": ["name"],
    },
}


def demo_registry() -> ApiRegistry:
    registry = ApiRegistry()
    for name, declaration in DECLARATIONS.items():
        registry.register(name, declaration)
    return registry


async def create_demo(database: Database) -> None:
    dialect = dialect_of(database)
    for table in metadata.sorted_tables:
        await database.execute(str(CreateTable(table, if_not_exists=True).compile(dialect=dialect)))
    async with database.transaction():  # one commit, not one per row (a sync to disk each)
        for table, rows in ((authors, AUTHORS), (articles, ARTICLES), (comments, COMMENTS)):
            for row in rows:
                await database.execute(table.insert().values(**row))
    if database.url.dialect == "postgresql":  # explicit ids leave the sequences behind
        for table in (authors, articles, comments):
            await database.execute(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                f"(SELECT MAX(id) FROM {table.name}))"
            )
