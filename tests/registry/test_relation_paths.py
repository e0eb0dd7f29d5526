"""Paths in `filterable` (`author.name`) are checked when the declaration is registered, and when the
API starts for what needs the related table (docs/query.md, "Filters across relations")."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry, DeclarationError
from tests.support.relation_filters import DECLARATIONS, create_schema

POSTS = DECLARATIONS["posts"]


def registry_with(posts_declaration: dict) -> ApiRegistry:
    registry = ApiRegistry()
    for name, declaration in DECLARATIONS.items():
        registry.register(name, posts_declaration if name == "posts" else declaration, source="site code")
    return registry


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("writer.name", "path 'writer.name': relation 'writer' is not listed in 'with'"),
        ("author.posts.title", "path 'author.posts.title': a path is '<relation>.<field>', one level deep"),
        ("author.", "path 'author.': a path is '<relation>.<field>', one level deep"),
        (".name", "path '.name': a path is '<relation>.<field>', one level deep"),
    ],
)
def test_a_path_through_no_listed_relation_fails_at_registration(path, problem):
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().register("posts", {**POSTS, "filterable": [path]}, source="site code")
    assert str(caught.value) == f"site code: object 'posts', key 'filterable': {problem}"


async def test_a_path_to_a_field_the_related_table_lacks_fails_when_the_api_starts(sqlite_database):
    await create_schema(sqlite_database)
    registry = registry_with({**POSTS, "filterable": ["author.nope"]})
    with pytest.raises(DeclarationError) as caught:
        await registry.build(sqlite_database)
    assert str(caught.value).startswith(
        "site code: object 'posts', key 'filterable': path 'author.nope': unknown field 'nope' "
        "(table 'rf_authors' has: "
    )


async def test_a_path_back_to_the_objects_own_table_fails_when_the_api_starts(sqlite_database):
    metadata = sa.MetaData()
    pages = sa.Table(
        "tree_pages",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.String(50)),
        sa.Column("parent_id", sa.Integer, sa.ForeignKey("tree_pages.id")),
    )
    await _create(sqlite_database, metadata)
    registry = ApiRegistry()
    declaration = {"model": pages, "fields": ["title"], "with": ["parent"], "filterable": ["parent.title"]}
    registry.register("pages", declaration, source="site code")
    with pytest.raises(DeclarationError) as caught:
        await registry.build(sqlite_database)
    assert str(caught.value) == (
        "site code: object 'pages', key 'filterable': path 'parent.title': relation 'parent' leads back "
        "to table 'tree_pages'"
    )


async def _create(database, metadata: sa.MetaData) -> None:
    dialect = sa.create_engine("sqlite://").dialect
    for table in metadata.sorted_tables:
        await database.execute(str(sa.schema.CreateTable(table).compile(dialect=dialect)))


async def test_every_declared_path_is_served_and_one_to_an_unpublished_field_is_named_in_the_log(
    sqlite_database, caplog
):
    await create_schema(sqlite_database)
    with caplog.at_level(logging.WARNING, logger="pb_headless"):
        catalog = await registry_with(POSTS).build(sqlite_database)
    assert list(catalog["posts"].paths) == [
        "author.name",
        "author.karma",
        "author.joined",
        "tags.slug",
        "tags.weight",
        "comments.body",
    ]
    logged = [record.getMessage() for record in caplog.records]
    assert any("path 'author.email' is ignored: no object publishes field 'email'" in line for line in logged)
    assert not any("has no index" in line for line in logged), logged


async def test_a_path_no_index_serves_is_named_at_start_up(sqlite_database, caplog):
    metadata = sa.MetaData()
    writers = sa.Table(
        "bare_writers",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(50)),
    )
    books = sa.Table(
        "bare_books",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.String(50)),
        sa.Column("writer_id", sa.Integer, sa.ForeignKey("bare_writers.id")),
    )
    registry = ApiRegistry()
    registry.register("writers", {"model": writers, "fields": ["name"]}, source="site code")
    registry.register(
        "books",
        {"model": books, "fields": ["title"], "with": ["writer"], "filterable": ["writer.name"]},
        source="site code",
    )
    await _create(sqlite_database, metadata)
    with caplog.at_level(logging.WARNING, logger="pb_headless"):
        await registry.build(sqlite_database)
    logged = [record.getMessage().split(";")[0] for record in caplog.records]
    assert (
        "pb_headless: site code: object 'books', key 'filterable': path 'writer.name' has no index on "
        "bare_writers.name, bare_books.writer_id" in logged
    )
