"""Objects for the query unit tests: a small blog schema compiled the way the registry compiles it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa

from pb_headless.database.dialect import CASEFOLD_FUNCTION
from pb_headless.registry.compile import compile_objects
from pb_headless.registry.declaration import check_declaration
from pb_headless.registry.spec import ObjectSpec

metadata = sa.MetaData()

authors = sa.Table(
    "authors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("email", sa.String(200)),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

articles = sa.Table(
    "articles",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.Text),
    sa.Column("price", sa.Numeric(10, 2)),
    sa.Column("rating", sa.Float),
    sa.Column("views", sa.Integer),
    sa.Column("featured", sa.Boolean),
    sa.Column("published_on", sa.Date),
    sa.Column("created_at", sa.DateTime),
    sa.Column("meta", sa.JSON),
    sa.Column("secret", sa.String(50)),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id")),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

comments = sa.Table(
    "comments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("article_id", sa.Integer, sa.ForeignKey("articles.id"), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

ARTICLES = {
    "model": articles,
    "fields": ["title", "body", "price", "rating", "views", "featured", "published_on", "created_at", "meta"],
    "filterable": [
        "id",
        "title",
        "body",
        "price",
        "rating",
        "views",
        "featured",
        "published_on",
        "created_at",
        "meta",
    ],
    "searchable": ["title", "body"],
    "sortable": ["id", "title", "price", "views", "created_at", "meta"],
    "with": ["author", "comments:id,body"],
    "per_page": 2,
    "max_per_page": 3,
}
AUTHORS = {"model": authors, "fields": ["name"], "filterable": ["name"], "sortable": ["name"]}


def build_specs(declarations: Mapping[str, Mapping[str, Any]]) -> dict[str, ObjectSpec]:
    """Declarations compiled as `ApiRegistry.build` does, relations attached."""
    checked = {name: check_declaration(name, raw, "tests") for name, raw in declarations.items()}
    return compile_objects(checked, {name: d.table for name, d in checked.items()}, metadata.tables)


@pytest.fixture(scope="session")
def specs() -> dict[str, ObjectSpec]:
    return build_specs({"articles": ARTICLES, "authors": AUTHORS})


@pytest.fixture(scope="session")
def article_spec(specs: dict[str, ObjectSpec]) -> ObjectSpec:
    return specs["articles"]


@pytest.fixture
def compile_specs() -> Callable[[Mapping[str, Mapping[str, Any]]], dict[str, ObjectSpec]]:
    return build_specs


@pytest.fixture
def make_spec() -> Callable[..., ObjectSpec]:
    """An articles object with some declaration keys changed."""

    def make(**changes: Any) -> ObjectSpec:
        return build_specs({"articles": {**ARTICLES, **changes}, "authors": AUTHORS})["articles"]

    return make


ROWS: dict[sa.Table, list[dict[str, Any]]] = {
    authors: [
        {"id": 1, "name": "Анна", "email": "anna@example.org", "published": True},
        {"id": 2, "name": "Hidden", "email": "h@example.org", "published": False},
    ],
    articles: [
        {
            "id": 1,
            "title": "Новости недели",
            "body": "Первый выпуск",
            "price": Decimal("19.99"),
            "rating": 4.5,
            "views": 10,
            "featured": True,
            "published_on": date(2024, 5, 1),
            "created_at": datetime(2024, 5, 1, 12, 0),
            "meta": {"tags": ["a"]},
            "secret": "s1",
            "author_id": 1,
        },
        {
            "id": 2,
            "title": "100% pure_fun",
            "body": r"C:\temp path",
            "price": Decimal("5.00"),
            "rating": None,
            "views": 20,
            "featured": False,
            "published_on": date(2024, 5, 2),
            "created_at": datetime(2024, 5, 2, 8, 30),
            "meta": None,
            "secret": "s2",
            "author_id": 2,
        },
        {
            "id": 3,
            "title": "Plain title",
            "body": "nothing special here",
            "price": None,
            "rating": 3.0,
            "views": None,
            "featured": None,
            "published_on": None,
            "created_at": None,
            "meta": None,
            "secret": None,
            "author_id": None,
        },
        {
            "id": 4,
            "title": "Draft",
            "body": "unpublished",
            "price": Decimal("1.00"),
            "rating": 1.0,
            "views": 5,
            "featured": True,
            "published_on": None,
            "created_at": None,
            "meta": None,
            "secret": None,
            "author_id": 1,
            "published": False,
        },
        {
            "id": 5,
            "title": "1000 pure fun",
            "body": "percent-free",
            "price": Decimal("7.50"),
            "rating": 2.0,
            "views": 30,
            "featured": False,
            "published_on": date(2024, 6, 1),
            "created_at": datetime(2024, 6, 1, 0, 0),
            "meta": None,
            "secret": None,
            "author_id": 1,
        },
    ],
    comments: [
        {"id": 1, "article_id": 1, "body": "first"},
        {"id": 2, "article_id": 1, "body": "second"},
        {"id": 3, "article_id": 2, "body": "hidden", "published": False},
        {"id": 4, "article_id": 5, "body": "only"},
    ],
}


def casefolding_sqlite(connection: sqlite3.Connection, _record: Any) -> None:
    """What `pb_headless.database.sqlite.serving.fit_for_serving` gives a `databases` SQLite
    connection, for a sync engine."""
    connection.create_function(
        CASEFOLD_FUNCTION,
        1,
        lambda value: value.casefold() if isinstance(value, str) else value,
        deterministic=True,
    )


def fill(engine: sa.Engine) -> None:
    metadata.create_all(engine)
    with engine.begin() as connection:
        for table, rows in ROWS.items():
            for row in rows:
                connection.execute(table.insert().values(**row))


@pytest.fixture(scope="session")
def engine() -> Iterator[sa.Engine]:
    """An in-memory SQLite database holding ROWS (one connection, so every use sees the same data)."""
    engine = sa.create_engine("sqlite://", poolclass=sa.StaticPool)
    sa.event.listen(engine, "connect", casefolding_sqlite)
    fill(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite file holding ROWS, for the `databases` driver the executor runs on."""
    path = tmp_path_factory.mktemp("query") / "blog.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    fill(engine)
    engine.dispose()
    return f"sqlite:///{path}"


@pytest.fixture
def fetch(engine: sa.Engine) -> Callable[[sa.Select[Any]], list[dict[str, Any]]]:
    def run(statement: sa.Select[Any]) -> list[dict[str, Any]]:
        with engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(statement)]

    return run
