"""Related records obey the object that publishes them, and a to-many `with` is bounded
(docs/query.md "with", docs/declarations.md "Relations in `with`"), on every database.

- A record hidden by the publishing object's `published` flag or `query` never shows inside another
  record's `with`, whether the relation lists its columns or not.
- A to-many relation shows at most the related object's `max_per_page` records per record (100 when
  undeclared), the first in the related object's order, chosen by one windowed query; lists name the
  records whose relation was cut in `meta.truncated`, and every answer names the relations in
  `X-Truncated-Relations`.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of
from tests.support.counting import counting

OBJECTS = "/api/pb/v1/objects"
TRUNCATED = "X-Truncated-Relations"

metadata = sa.MetaData()
writers = sa.Table(
    "nb_writers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("retired", sa.Boolean, nullable=False, default=False),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)
books = sa.Table(
    "nb_books",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(100), nullable=False),
    sa.Column("free", sa.Boolean, nullable=False, default=False),
    sa.Column("writer_id", sa.Integer, sa.ForeignKey("nb_writers.id"), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

# Writer 1: books 1-5 (book 3 unpublished, book 4 free: outside the books object's `query`), so 3
# books are served. Writer 2 (retired: outside the writers object's `query`): book 6. Writer 3:
# unpublished, book 7. Writer 4: none.
WRITERS = [
    {"id": 1, "name": "Many", "retired": False, "published": True},
    {"id": 2, "name": "Retired", "retired": True, "published": True},
    {"id": 3, "name": "Unpublished", "retired": False, "published": False},
    {"id": 4, "name": "None yet", "retired": False, "published": True},
]
BOOKS = [
    {"id": 1, "title": "One", "free": False, "writer_id": 1, "published": True},
    {"id": 2, "title": "Two", "free": False, "writer_id": 1, "published": True},
    {"id": 3, "title": "Three", "free": False, "writer_id": 1, "published": False},
    {"id": 4, "title": "Four", "free": True, "writer_id": 1, "published": True},
    {"id": 5, "title": "Five", "free": False, "writer_id": 1, "published": True},
    {"id": 6, "title": "Six", "free": False, "writer_id": 2, "published": True},
    {"id": 7, "title": "Seven", "free": False, "writer_id": 3, "published": True},
]

BOOKS_OBJECT = {
    "model": books,
    "fields": ["title", "writer_id"],
    "with": ["writer"],
    "query": lambda select: select.where(books.c.free == sa.false()),
}
WRITERS_OBJECT = {
    "model": writers,
    "fields": ["name"],
    "with": ["books"],
    "query": lambda select: select.where(writers.c.retired == sa.false()),
}


@pytest.fixture
async def shelf(database):
    dialect = dialect_of(database)
    for table in metadata.sorted_tables:
        await database.execute(str(CreateTable(table).compile(dialect=dialect)))
    await database.execute(writers.insert().values(WRITERS))
    await database.execute(books.insert().values(BOOKS))
    return database


async def serve(database, host_factory, declarations):
    registry = ApiRegistry()
    for name, declaration in declarations.items():
        registry.register(name, declaration)
    host = await host_factory(database, registry)
    await host.api.startup()
    host.headers = host.auth(await host.token("*"))
    return host


async def get(host, path: str):
    response = await host.client.get(f"{OBJECTS}/{path}", headers=host.headers)
    assert response.status_code == 200, response.text
    return response


# -- narrowing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("relation", ["books", "books:id,title"])
async def test_a_book_the_books_object_hides_is_not_shown_inside_its_writer(shelf, host_factory, relation):
    host = await serve(
        shelf, host_factory, {"books": BOOKS_OBJECT, "writers": {**WRITERS_OBJECT, "with": [relation]}}
    )
    shown = (await get(host, "writers/1?with=books&fields=id")).json()["data"]
    assert [book["id"] for book in shown["books"]] == [1, 2, 5]
    assert (await host.client.get(f"{OBJECTS}/books/4", headers=host.headers)).status_code == 404
    listed = (await get(host, "writers?with=books&fields=id")).json()["data"]
    assert [[book["id"] for book in writer["books"]] for writer in listed] == [[1, 2, 5], []]


@pytest.mark.parametrize("relation", ["writer", "writer:id,name"])
async def test_a_writer_the_writers_object_hides_renders_null_inside_a_book(shelf, host_factory, relation):
    host = await serve(
        shelf, host_factory, {"books": {**BOOKS_OBJECT, "with": [relation]}, "writers": WRITERS_OBJECT}
    )
    listed = (await get(host, "books?with=writer&fields=id")).json()["data"]
    assert listed == [
        {"id": 1, "writer": {"id": 1, "name": "Many"}},
        {"id": 2, "writer": {"id": 1, "name": "Many"}},
        {"id": 5, "writer": {"id": 1, "name": "Many"}},
        {"id": 6, "writer": None},  # retired: outside the writers object's query
        {"id": 7, "writer": None},
    ]  # unpublished
    assert (await host.client.get(f"{OBJECTS}/writers/2", headers=host.headers)).status_code == 404


async def test_without_an_object_publishing_the_table_only_its_published_flag_narrows(shelf, host_factory):
    host = await serve(shelf, host_factory, {"writers": {**WRITERS_OBJECT, "with": ["books:title"]}})
    shown = (await get(host, "writers/1?with=books&fields=id")).json()["data"]
    assert [book["id"] for book in shown["books"]] == [1, 2, 4, 5]


# -- the bound ---------------------------------------------------------------------------------------


async def test_a_to_many_relation_shows_at_most_the_related_objects_max_per_page(shelf, host_factory):
    host = await serve(
        shelf,
        host_factory,
        {
            "books": {**BOOKS_OBJECT, "max_per_page": 2, "per_page": 2, "default_sort": "-title"},
            "writers": WRITERS_OBJECT,
        },
    )
    response = await get(host, "writers?with=books&fields=id")
    body = response.json()
    # The first two in the books object's own order (-title): Two, One; Five is cut.
    assert body["data"] == [
        {
            "id": 1,
            "books": [{"id": 2, "title": "Two", "writer_id": 1}, {"id": 1, "title": "One", "writer_id": 1}],
        },
        {"id": 4, "books": []},
    ]
    assert body["meta"]["truncated"] == {"books": [1]}
    assert response.headers[TRUNCATED] == "books"


async def test_show_says_in_a_header_which_relations_were_cut_and_keeps_data_alone(shelf, host_factory):
    host = await serve(
        shelf,
        host_factory,
        {"books": {**BOOKS_OBJECT, "max_per_page": 2, "per_page": 2}, "writers": WRITERS_OBJECT},
    )
    response = await get(host, "writers/1?with=books&fields=id")
    assert response.json() == {
        "data": {
            "id": 1,
            "books": [{"id": 1, "title": "One", "writer_id": 1}, {"id": 2, "title": "Two", "writer_id": 1}],
        }
    }
    assert response.headers[TRUNCATED] == "books"


async def test_a_relation_exactly_at_its_bound_is_not_cut(shelf, host_factory):
    host = await serve(
        shelf,
        host_factory,
        {"books": {**BOOKS_OBJECT, "max_per_page": 3, "per_page": 3}, "writers": WRITERS_OBJECT},
    )
    response = await get(host, "writers?with=books&fields=id")
    assert [len(writer["books"]) for writer in response.json()["data"]] == [3, 0]
    assert "truncated" not in response.json()["meta"] and TRUNCATED not in response.headers
    assert TRUNCATED not in (await get(host, "writers/1?with=books")).headers


async def test_an_undeclared_bound_is_100_related_records(shelf, host_factory):
    await shelf.execute(
        books.insert().values(
            [
                {"id": 100 + n, "title": f"Extra {n}", "free": False, "writer_id": 4, "published": True}
                for n in range(101)
            ]
        )
    )
    host = await serve(shelf, host_factory, {"writers": {**WRITERS_OBJECT, "with": ["books:title"]}})
    response = await get(host, "writers?with=books&fields=id")
    many, extra = response.json()["data"]
    assert len(many["books"]) == 4 and len(extra["books"]) == 100
    assert [book["id"] for book in extra["books"]] == list(range(100, 200))
    assert response.json()["meta"]["truncated"] == {"books": [4]}


async def test_the_bound_is_one_windowed_query_for_the_whole_page(shelf, host_factory):
    host = await serve(
        shelf,
        host_factory,
        {"books": {**BOOKS_OBJECT, "max_per_page": 1, "per_page": 1}, "writers": WRITERS_OBJECT},
    )
    await get(host, "writers")  # the registry is built on the first request; not counted below
    with counting(shelf) as calls:
        await get(host, "writers?limit=1")
    plain = calls["count"]
    with counting(shelf) as calls:
        body = (await get(host, "writers?with=books&limit=2")).json()
    assert calls["count"] == plain + 1
    assert body["meta"]["truncated"] == {"books": [1]}
