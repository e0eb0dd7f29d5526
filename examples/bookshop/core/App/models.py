"""The bookshop that docs/declarations.md publishes with every key: writers, books, reviews."""

import sqlalchemy as sa

metadata = sa.MetaData()

writers = sa.Table(
    "writers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
)

books = sa.Table(
    "books",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("summary", sa.Text),
    sa.Column("genre", sa.String(50)),
    sa.Column("price", sa.Numeric(10, 2), nullable=False, server_default="0"),
    sa.Column("pages", sa.Integer),
    sa.Column("released_on", sa.Date),
    sa.Column("writer_id", sa.ForeignKey("writers.id")),
)

reviews = sa.Table(
    "reviews",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("book_id", sa.ForeignKey("books.id"), nullable=False),
    sa.Column("stars", sa.Integer, nullable=False),
    sa.Column("text", sa.Text),
)
