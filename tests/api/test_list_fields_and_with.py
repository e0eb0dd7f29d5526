"""`fields` and `with` (docs/query.md).

Demo relations: `author` (to-one, declared `author:id,name`) and `comments` (to-many, `comments:id,body`;
comment 3 is unpublished). Author 3 is unpublished.
"""

from __future__ import annotations

import pytest

from tests.support.demo import articles

API = "/api/pb/v1/objects/articles"
PUBLISHED_FIELDS = [
    "id",
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
]


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read"))
    return demo


async def listing(host, query: str) -> dict:
    response = await host.client.get(f"{API}?{query}", headers=host.headers)
    assert response.status_code == 200, response.text
    return response.json()


# -- fields -------------------------------------------------------------------------------------------


async def test_a_record_has_exactly_the_published_fields_in_declared_order(reader):
    body = await listing(reader, "")
    assert all(list(record) == PUBLISHED_FIELDS for record in body["data"])


async def test_fields_narrows_the_record_and_always_keeps_the_primary_key(reader):
    body = await listing(reader, "fields=title")
    assert body["data"][0] == {"id": 1, "title": "Hello world"}
    assert all(list(record) == ["id", "title"] for record in body["data"])
    assert "ignored" not in body["meta"]


async def test_fields_keep_the_published_order_whatever_order_they_are_asked_in(reader):
    body = await listing(reader, "fields=views,title")
    assert list(body["data"][0]) == ["id", "title", "views"]


async def test_fields_may_name_only_the_primary_key(reader):
    body = await listing(reader, "fields=id")
    assert body["data"] == [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}, {"id": 6}]


async def test_a_field_that_is_not_published_is_ignored_and_named(reader):
    body = await listing(reader, "fields=title,secret,published,created_by")
    assert list(body["data"][0]) == ["id", "title"]
    assert body["meta"]["ignored"] == ["fields=secret", "fields=published", "fields=created_by"]


async def test_when_no_valid_field_remains_every_published_field_is_shown(reader):
    body = await listing(reader, "fields=secret")
    assert list(body["data"][0]) == PUBLISHED_FIELDS
    assert body["meta"]["ignored"] == ["fields=secret"]


async def test_an_empty_fields_shows_every_published_field_and_is_not_named(reader):
    body = await listing(reader, "fields=")
    assert list(body["data"][0]) == PUBLISHED_FIELDS
    assert "ignored" not in body["meta"]


# -- with -----------------------------------------------------------------------------------------


async def test_a_to_one_relation_renders_an_object_with_the_declared_columns_or_null(reader):
    body = await listing(reader, "with=author&fields=title")
    assert body["data"] == [
        {"id": 1, "title": "Hello world", "author": {"id": 1, "name": "Anna"}},
        {"id": 2, "title": "Новости компании", "author": {"id": 2, "name": "Boris"}},
        {"id": 3, "title": "Sale: 50% off_today", "author": {"id": 1, "name": "Anna"}},
        {"id": 4, "title": "Quarterly report", "author": None},
        {"id": 6, "title": "Lorem ipsum dolor", "author": {"id": 1, "name": "Anna"}},
    ]


async def test_a_to_many_relation_renders_an_array_of_its_published_rows(reader):
    body = await listing(reader, "with=comments&fields=id")
    assert body["data"] == [
        {"id": 1, "comments": [{"id": 1, "body": "First!"}, {"id": 2, "body": "Nice"}]},  # 3 is unpublished
        {"id": 2, "comments": [{"id": 4, "body": "Отлично"}]},
        {"id": 3, "comments": []},
        {"id": 4, "comments": []},
        {"id": 6, "comments": []},
    ]


async def test_several_relations_load_together_after_the_fields(reader):
    body = await listing(reader, "with=author,comments&fields=title&limit=1")
    assert body["data"] == [
        {
            "id": 1,
            "title": "Hello world",
            "author": {"id": 1, "name": "Anna"},
            "comments": [{"id": 1, "body": "First!"}, {"id": 2, "body": "Nice"}],
        }
    ]


async def test_a_relation_loads_without_its_key_among_the_fields(reader):
    body = await listing(reader, "with=author&fields=title&limit=1")
    assert "author_id" not in body["data"][0]
    assert body["data"][0]["author"] == {"id": 1, "name": "Anna"}


async def test_a_to_one_relation_to_an_unpublished_row_renders_null(reader):
    await reader.database.execute(
        articles.insert().values(id=8, title="By a hidden author", author_id=3, published=True)
    )
    body = await listing(reader, "with=author&filter[id]=8&fields=id")
    assert body["data"] == [{"id": 8, "author": None}]


async def test_a_relation_needs_no_scope_beyond_the_objects_read_scope(reader):
    # The reader's token carries articles.read only, not authors.read.
    body = await listing(reader, "with=author&fields=id&limit=1")
    assert body["data"][0]["author"] == {"id": 1, "name": "Anna"}


@pytest.mark.parametrize("item", ["author.posts", "comments.author", "nope", "author_id", "secret", "AUTHOR"])
async def test_a_relation_not_listed_in_with_or_nested_is_ignored_and_named(reader, item):
    body = await listing(reader, f"with={item}&fields=title&limit=1")
    assert body["data"] == [{"id": 1, "title": "Hello world"}]
    assert body["meta"]["ignored"] == [f"with={item}"]


async def test_listed_relations_load_next_to_ignored_ones(reader):
    body = await listing(reader, "with=author.posts,author&fields=id&limit=1")
    assert body["data"] == [{"id": 1, "author": {"id": 1, "name": "Anna"}}]
    assert body["meta"]["ignored"] == ["with=author.posts"]


async def test_relations_load_in_one_query_each_whatever_the_page_size(reader):
    """No N+1: a page of five costs the same queries as a page of one."""
    database = reader.database
    calls = {"count": 0}
    originals = {name: getattr(database, name) for name in ("fetch_all", "fetch_one", "fetch_val")}

    def counting(original):
        async def call(*args, **kwargs):
            calls["count"] += 1
            return await original(*args, **kwargs)

        return call

    async def queries_for(query: str) -> int:
        calls["count"] = 0
        for name, original in originals.items():
            setattr(database, name, counting(original))
        try:
            await listing(reader, query)
        finally:
            for name in originals:
                delattr(database, name)  # the instance attribute hid the method
        return calls["count"]

    await listing(reader, "")  # the registry is built on the first request; not counted below
    plain = await queries_for("limit=5")
    one = await queries_for("with=author,comments&limit=1")
    five = await queries_for("with=author,comments&limit=5")
    assert one == five == plain + 2
