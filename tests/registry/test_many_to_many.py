"""Many-to-many relations in `with` (docs/declarations.md "Relations in `with`"): through a declarative
class's `relationship(..., secondary=...)` in both directions, and through a Core association table
with two foreign keys (a model or a reflected `table`), rendered as arrays with the related object's
published fields and narrowing, in one query per relation, on every database.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of
from tests.support.counting import counting

OBJECTS = "/api/pb/v1/objects"


class Base(DeclarativeBase):
    pass


article_tags = sa.Table(
    "mm_article_tags",
    Base.metadata,
    sa.Column("article_id", sa.Integer, sa.ForeignKey("mm_articles.id"), primary_key=True),
    sa.Column("tag_id", sa.Integer, sa.ForeignKey("mm_tags.id"), primary_key=True),
)


class Article(Base):
    __tablename__ = "mm_articles"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(sa.String(100))
    published: Mapped[bool] = mapped_column(default=True)
    tags: Mapped[list[Tag]] = relationship(secondary=article_tags, back_populates="articles")


class Tag(Base):
    __tablename__ = "mm_tags"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(sa.String(50))
    colour: Mapped[str | None] = mapped_column(sa.String(20))
    published: Mapped[bool] = mapped_column(default=True)
    articles: Mapped[list[Article]] = relationship(secondary=article_tags, back_populates="tags")


# The same shape as Core tables: no mapper, only two foreign keys on the association table.
core = sa.MetaData()
posts = sa.Table(
    "mm_posts",
    core,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(100), nullable=False),
)
labels = sa.Table(
    "mm_labels",
    core,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(50), nullable=False),
)
post_labels = sa.Table(
    "mm_post_labels",
    core,
    sa.Column("post_id", sa.Integer, sa.ForeignKey("mm_posts.id"), primary_key=True),
    sa.Column("label_id", sa.Integer, sa.ForeignKey("mm_labels.id"), primary_key=True),
)

# Article 1 has two tags (and the unpublished tag 3, and tag 4 that the tags object's `query` hides);
# tag 1 is shared by articles 1 and 2; article 3 has none; article 4 is unpublished but tagged 1.
ROWS = [
    (
        Article.__table__,
        [
            {"id": 1, "title": "Tagged twice", "published": True},
            {"id": 2, "title": "Shares a tag", "published": True},
            {"id": 3, "title": "No tags", "published": True},
            {"id": 4, "title": "Draft", "published": False},
        ],
    ),
    (
        Tag.__table__,
        [
            {"id": 1, "name": "python", "colour": "blue", "published": True},
            {"id": 2, "name": "sql", "colour": "green", "published": True},
            {"id": 3, "name": "unpublished", "colour": None, "published": False},
            {"id": 4, "name": "secret", "colour": None, "published": True},
        ],
    ),
    (
        article_tags,
        [
            {"article_id": 1, "tag_id": 2},
            {"article_id": 1, "tag_id": 1},
            {"article_id": 1, "tag_id": 3},
            {"article_id": 2, "tag_id": 1},
            {"article_id": 2, "tag_id": 4},
            {"article_id": 4, "tag_id": 1},
        ],
    ),
    (posts, [{"id": 1, "title": "Two labels"}, {"id": 2, "title": "One label"}, {"id": 3, "title": "None"}]),
    (labels, [{"id": 1, "name": "shared"}, {"id": 2, "name": "single"}, {"id": 3, "name": "unused"}]),
    (
        post_labels,
        [{"post_id": 1, "label_id": 1}, {"post_id": 1, "label_id": 2}, {"post_id": 2, "label_id": 1}],
    ),
]

TAGS = {"model": Tag, "fields": ["name"], "query": lambda select: select.where(Tag.name != "secret")}
ARTICLES = {"model": Article, "fields": ["title"], "with": ["tags"]}


@pytest.fixture
async def tagged(database):
    dialect = dialect_of(database)
    for table in [*Base.metadata.sorted_tables, *core.sorted_tables]:
        await database.execute(str(CreateTable(table).compile(dialect=dialect)))
    for table, rows in ROWS:
        for row in rows:
            await database.execute(table.insert().values(**row))
    return database


async def serve(database, host_factory, declarations):
    registry = ApiRegistry()
    for name, declaration in declarations.items():
        registry.register(name, declaration)
    host = await host_factory(database, registry)
    await host.api.startup()
    host.headers = host.auth(await host.token("*"))
    return host


async def get(host, path: str) -> dict:
    response = await host.client.get(f"{OBJECTS}/{path}", headers=host.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "ignored" not in body.get("meta", {}), body["meta"]
    return body


async def test_a_secondary_relationship_renders_an_array_of_the_tags_object_fields(tagged, host_factory):
    host = await serve(tagged, host_factory, {"articles": ARTICLES, "tags": TAGS})
    body = await get(host, "articles?with=tags")
    assert body["data"] == [
        {"id": 1, "title": "Tagged twice", "tags": [{"id": 1, "name": "python"}, {"id": 2, "name": "sql"}]},
        {"id": 2, "title": "Shares a tag", "tags": [{"id": 1, "name": "python"}]},
        {"id": 3, "title": "No tags", "tags": []},
    ]


async def test_the_other_direction_lists_every_published_article_sharing_a_tag(tagged, host_factory):
    host = await serve(tagged, host_factory, {"articles": ARTICLES, "tags": {**TAGS, "with": ["articles"]}})
    body = await get(host, "tags?with=articles")
    assert body["data"] == [
        {
            "id": 1,
            "name": "python",
            "articles": [{"id": 1, "title": "Tagged twice"}, {"id": 2, "title": "Shares a tag"}],
        },
        {"id": 2, "name": "sql", "articles": [{"id": 1, "title": "Tagged twice"}]},
    ]


async def test_show_loads_a_many_to_many_relation_too(tagged, host_factory):
    host = await serve(tagged, host_factory, {"articles": ARTICLES, "tags": TAGS})
    assert (await get(host, "articles/2?with=tags"))["data"] == {
        "id": 2,
        "title": "Shares a tag",
        "tags": [{"id": 1, "name": "python"}],
    }
    assert (await get(host, "articles/3?with=tags"))["data"] == {"id": 3, "title": "No tags", "tags": []}


async def test_a_field_list_shows_those_columns_of_the_related_table_not_of_the_association(
    tagged, host_factory
):
    host = await serve(
        tagged, host_factory, {"articles": {**ARTICLES, "with": ["tags:id,name,colour"]}, "tags": TAGS}
    )
    body = await get(host, "articles?with=tags&fields=id&limit=1")
    assert body["data"] == [
        {
            "id": 1,
            "tags": [
                {"id": 1, "name": "python", "colour": "blue"},
                {"id": 2, "name": "sql", "colour": "green"},
            ],
        }
    ]


async def test_without_a_tags_object_only_unpublished_tags_are_left_out(tagged, host_factory):
    host = await serve(tagged, host_factory, {"articles": {**ARTICLES, "with": ["tags:name"]}})
    body = await get(host, "articles?with=tags&fields=id&limit=2")
    assert body["data"] == [
        {"id": 1, "tags": [{"id": 1, "name": "python"}, {"id": 2, "name": "sql"}]},
        {"id": 2, "tags": [{"id": 1, "name": "python"}, {"id": 4, "name": "secret"}]},
    ]


@pytest.mark.parametrize("declared", ["model", "table"])
async def test_core_tables_with_an_association_table_relate_both_ways(tagged, host_factory, declared):
    def declaration(table: sa.Table, fields: list[str], relation: str) -> dict:
        source = {"model": table} if declared == "model" else {"table": table.name}
        return {**source, "fields": fields, "with": [relation]}

    host = await serve(
        tagged,
        host_factory,
        {"posts": declaration(posts, ["title"], "labels"), "labels": declaration(labels, ["name"], "posts")},
    )
    assert (await get(host, "posts?with=labels&fields=id"))["data"] == [
        {"id": 1, "labels": [{"id": 1, "name": "shared"}, {"id": 2, "name": "single"}]},
        {"id": 2, "labels": [{"id": 1, "name": "shared"}]},
        {"id": 3, "labels": []},
    ]
    assert (await get(host, "labels?with=posts&fields=id"))["data"] == [
        {"id": 1, "posts": [{"id": 1, "title": "Two labels"}, {"id": 2, "title": "One label"}]},
        {"id": 2, "posts": [{"id": 1, "title": "Two labels"}]},
        {"id": 3, "posts": []},
    ]


async def test_a_many_to_many_relation_costs_one_query_whatever_the_page_size(tagged, host_factory):
    host = await serve(tagged, host_factory, {"articles": ARTICLES, "tags": TAGS})
    await get(host, "articles")  # the registry is built on the first request; not counted below
    with counting(tagged) as calls:
        await get(host, "articles?limit=1")
    plain = calls["count"]
    with counting(tagged) as calls:
        await get(host, "articles?with=tags&limit=1")
    one = calls["count"]
    with counting(tagged) as calls:
        await get(host, "articles?with=tags&limit=3")
    assert one == calls["count"] == plain + 1


async def test_a_many_to_many_relation_is_bounded_by_the_tags_objects_max_per_page(tagged, host_factory):
    host = await serve(
        tagged,
        host_factory,
        {"articles": ARTICLES, "tags": {**TAGS, "per_page": 1, "max_per_page": 1, "default_sort": "-name"}},
    )
    response = await host.client.get(f"{OBJECTS}/articles?with=tags", headers=host.headers)
    assert [article["tags"] for article in response.json()["data"]] == [
        [{"id": 2, "name": "sql"}],
        [{"id": 1, "name": "python"}],
        [],
    ]
    assert response.json()["meta"]["truncated"] == {"tags": [1]}
    assert response.headers["X-Truncated-Relations"] == "tags"


async def test_the_openapi_document_shows_a_many_to_many_relation_as_an_array(tagged, host_factory):
    host = await serve(tagged, host_factory, {"articles": ARTICLES, "tags": TAGS})
    document = (await host.client.get("/api/pb/v1/openapi.json", headers=host.headers)).json()
    tags = document["components"]["schemas"]["articles.Record"]["properties"]["tags"]
    assert (tags["type"], tags["maxItems"]) == ("array", 100)  # the tags object's max_per_page
    assert set(tags["items"]["properties"]) == {"id", "name"}
