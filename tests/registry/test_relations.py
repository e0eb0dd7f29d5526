"""Relations in `with` (docs/query.md `with`): resolved from a declarative class's
`relationship()` or from foreign keys, rendered with the declared columns or the publishing object's fields,
on every database.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of

OBJECTS = "/api/pb/v1/objects"


class Base(DeclarativeBase):
    pass


class Writer(Base):
    __tablename__ = "rel_writers"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(sa.String(100))
    email: Mapped[str | None] = mapped_column(sa.String(200))
    published: Mapped[bool] = mapped_column(default=True)


class Book(Base):
    """Neither relation follows a naming convention: only the mapper knows where they lead."""

    __tablename__ = "rel_books"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(sa.String(200))
    penned_by: Mapped[int | None] = mapped_column(sa.ForeignKey("rel_writers.id"))
    published: Mapped[bool] = mapped_column(default=True)
    author: Mapped[Writer | None] = relationship()
    notes: Mapped[list[Remark]] = relationship(order_by="Remark.id")


class Remark(Base):
    __tablename__ = "rel_remarks"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    about: Mapped[int] = mapped_column(sa.ForeignKey("rel_books.id"))
    text: Mapped[str] = mapped_column(sa.String(200))
    published: Mapped[bool] = mapped_column(default=True)


chapters = sa.Table(
    "chapters",
    Base.metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("rel_book_id", sa.Integer, sa.ForeignKey("rel_books.id"), nullable=False),
    sa.Column("heading", sa.String(100), nullable=False),
)

ROWS = [
    (
        Writer,
        [
            {"id": 1, "name": "Чехов", "email": "anton@example.com", "published": True},
            {"id": 2, "name": "Hidden", "email": None, "published": False},
        ],
    ),
    (
        Book,
        [
            {"id": 1, "title": "The Seagull", "penned_by": 1, "published": True},
            {"id": 2, "title": "By a hidden writer", "penned_by": 2, "published": True},
            {"id": 3, "title": "Anonymous", "penned_by": None, "published": True},
            {"id": 4, "title": "Unpublished", "penned_by": 1, "published": False},
        ],
    ),
    (
        Remark,
        [
            {"id": 1, "about": 1, "text": "moving", "published": True},
            {"id": 2, "about": 1, "text": "spam", "published": False},
            {"id": 3, "about": 1, "text": "long", "published": True},
            {"id": 4, "about": 2, "text": "odd", "published": True},
        ],
    ),
    (
        chapters,
        [{"id": 1, "rel_book_id": 1, "heading": "Act I"}, {"id": 2, "rel_book_id": 1, "heading": "Act II"}],
    ),
]


@pytest.fixture
async def library(database):
    dialect = dialect_of(database)
    for table in Base.metadata.sorted_tables:
        await database.execute(str(CreateTable(table).compile(dialect=dialect)))
    for model, rows in ROWS:
        table = model if isinstance(model, sa.Table) else model.__table__
        for row in rows:
            await database.execute(table.insert().values(**row))
    return database


async def serve(database, host_factory, declarations):
    registry = ApiRegistry()
    for name, declaration in declarations.items():
        registry.register(name, declaration)
    host = await host_factory(database, registry)
    await host.api.startup()
    host.headers = host.auth(await host.token("books.read"))
    return host


async def records(host, query: str) -> list[dict]:
    response = await host.client.get(f"{OBJECTS}/books?{query}", headers=host.headers)
    assert response.status_code == 200, response.text
    assert "ignored" not in response.json()["meta"], response.json()["meta"]
    return response.json()["data"]


async def test_relationships_of_a_declarative_class_load_by_their_own_names(library, host_factory):
    host = await serve(
        library,
        host_factory,
        {"books": {"model": Book, "fields": ["title"], "with": ["author:id,name", "notes:text"]}},
    )
    assert await records(host, "with=author,notes") == [
        {
            "id": 1,
            "title": "The Seagull",
            "author": {"id": 1, "name": "Чехов"},
            "notes": [{"id": 1, "text": "moving"}, {"id": 3, "text": "long"}],
        },
        {"id": 2, "title": "By a hidden writer", "author": None, "notes": [{"id": 4, "text": "odd"}]},
        {"id": 3, "title": "Anonymous", "author": None, "notes": []},
    ]


async def test_a_relation_without_a_column_list_shows_the_fields_of_the_object_publishing_it(
    library, host_factory
):
    host = await serve(
        library,
        host_factory,
        {
            "books": {"model": Book, "fields": ["title"], "with": ["author"]},
            "writers": {"model": Writer, "fields": ["name"]},
        },
    )
    # The writers object publishes `name` only: `email` stays out of the books too.
    assert await records(host, "with=author&fields=id&limit=1") == [
        {"id": 1, "author": {"id": 1, "name": "Чехов"}}
    ]


async def test_the_relation_key_is_read_even_when_it_is_not_published(library, host_factory):
    host = await serve(
        library, host_factory, {"books": {"model": Book, "fields": ["title"], "with": ["author:name"]}}
    )
    first = (await records(host, "with=author&limit=1"))[0]
    assert first == {"id": 1, "title": "The Seagull", "author": {"id": 1, "name": "Чехов"}}


async def test_a_to_many_relation_found_by_a_foreign_key_to_a_table_of_its_name(library, host_factory):
    host = await serve(
        library,
        host_factory,
        {"books": {"model": Book.__table__, "fields": ["title"], "with": ["chapters:heading"]}},
    )
    assert await records(host, "with=chapters&fields=id") == [
        {"id": 1, "chapters": [{"id": 1, "heading": "Act I"}, {"id": 2, "heading": "Act II"}]},
        {"id": 2, "chapters": []},
        {"id": 3, "chapters": []},
    ]


async def test_show_loads_relations_of_a_declarative_class_too(library, host_factory):
    host = await serve(
        library,
        host_factory,
        {"books": {"model": Book, "fields": ["title"], "with": ["author:id,name", "notes:text"]}},
    )
    response = await host.client.get(f"{OBJECTS}/books/1?with=notes,author&fields=id", headers=host.headers)
    assert response.json() == {
        "data": {
            "id": 1,
            "notes": [{"id": 1, "text": "moving"}, {"id": 3, "text": "long"}],
            "author": {"id": 1, "name": "Чехов"},
        }
    }


async def test_relations_are_listed_by_objects(library, host_factory):
    host = await serve(
        library,
        host_factory,
        {"books": {"model": Book, "fields": ["title"], "with": ["author:id,name", "notes:text"]}},
    )
    response = await host.client.get(OBJECTS, headers=host.headers)
    assert response.json()["data"][0]["with"] == ["author", "notes"]
