"""Fixtures for the rule engine's unit tests: a one-field compiler and a small articles table."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlalchemy as sa

from pb_headless.rules import Validator, compile_rules


@pytest.fixture
def one_field() -> Callable[..., Validator]:
    """Compile a validator for a table with an id and one writable column (named `field` unless told)."""

    def compile_one(
        type_: sa.types.TypeEngine,
        rules: str | list[str] | None = None,
        *,
        name: str = "field",
        **column_options: object,
    ) -> Validator:
        table = sa.Table(
            "things",
            sa.MetaData(),
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column(name, type_, **column_options),
        )
        return compile_rules("things", dict(table.c), [name], {name: rules} if rules is not None else {})

    return compile_one


@pytest.fixture
def articles() -> sa.Table:
    return sa.Table(
        "articles",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("slug", sa.String(80), nullable=False, server_default=""),
        sa.Column("body", sa.Text),
        sa.Column("price", sa.Numeric(10, 2)),
        sa.Column("qty", sa.Integer),
        sa.Column("rating", sa.Float),
        sa.Column("published", sa.Boolean, nullable=False, default=True),
        sa.Column("published_on", sa.Date),
        sa.Column("starts_at", sa.DateTime(timezone=True)),
        sa.Column("ends_at", sa.DateTime()),
        sa.Column("status", sa.String(20)),
        sa.Column("extra", sa.JSON),
        sa.Column("secret", sa.String(50)),
    )


@pytest.fixture
def article_rules() -> dict[str, str]:
    return {
        "title": "required|string|max:200",
        "slug": "alpha_dash|unique",
        "status": "in:draft,published",
        "qty": "integer|min:0",
    }


@pytest.fixture
def article_validator(articles: sa.Table, article_rules: dict[str, str]) -> Validator:
    writable = [column.name for column in articles.c if column.name not in ("id", "secret")]
    return compile_rules("articles", dict(articles.c), writable, article_rules)
