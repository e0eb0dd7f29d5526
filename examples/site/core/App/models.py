"""The example site's content tables (SQLAlchemy Core), created by `python -m examples.site init`."""

import sqlalchemy as sa

metadata = sa.MetaData()

authors = sa.Table(
    "authors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False, index=True),  # serves `filter[author.name]`
    sa.Column("bio", sa.Text, nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

articles = sa.Table(
    "articles",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False, index=True),  # and `filter[articles.title]`
    sa.Column("body", sa.Text, nullable=True),
    sa.Column("category", sa.String(50), nullable=True),
    sa.Column("price", sa.Numeric(10, 2), nullable=True),
    sa.Column("published_at", sa.DateTime, nullable=True),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=True, index=True),
    sa.Column("views", sa.Integer, nullable=True),
    sa.Column("featured", sa.Boolean, nullable=False, server_default=sa.false()),
    # Only published rows are shown on the site and served by the API.
    sa.Column("published", sa.Boolean, nullable=False, default=True),
    # Filled by the API with the token's acting user, when it has one.
    sa.Column("created_by", sa.String(64), nullable=True),
    sa.Column("updated_by", sa.String(64), nullable=True),
)
