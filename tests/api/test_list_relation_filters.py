"""Filters across relations: `filter[author.name]`, `filter[tags.slug]` (docs/query.md).

The schema is tests/support/relation_filters.py: every published post, its author (to-one), tags
(many-to-many) and comments (to-many, narrowed by the comments' `query`), on every database.
"""

from __future__ import annotations

import pytest

from tests.support.relation_filters import authors, create_schema, relation_registry

API = "/api/pb/v1/objects/posts"


@pytest.fixture
async def site(database, host_factory):
    await create_schema(database)
    host = await host_factory(database, relation_registry())
    host.headers = host.auth(await host.token("posts.read"))
    return host


async def listing(host, query: str, status: int = 200) -> dict:
    response = await host.client.get(f"{API}?{query}", headers=host.headers)
    assert response.status_code == status, response.text
    return response.json()


async def ids(host, query: str) -> list[int]:
    body = await listing(host, f"{query}&fields=id&limit=100")
    found = [record["id"] for record in body["data"]]
    assert body["meta"]["total"] == len(found), body["meta"]
    assert "ignored" not in body["meta"], body["meta"]
    return found


# Post 3 has no author, post 4's author is unpublished: both read as "no related record" (null).
TO_ONE = [
    ("filter[author.name]=Ann", [1, 6]),
    ("filter[author.name][eq]=Bob", [2]),
    ("filter[author.name][ne]=Ann", [2]),
    ("filter[author.karma][gt]=5", [1, 6]),
    ("filter[author.karma][gte]=10", [1, 6]),
    ("filter[author.karma][lt]=10", []),
    ("filter[author.karma][lte]=10", [1, 6]),
    ("filter[author.name][like]=o", [2]),
    ("filter[author.name][like]=AN", [1, 6]),
    ("filter[author.name][in]=Ann,Bob", [1, 2, 6]),
    ("filter[author.name][in][]=Bob", [2]),
    ("filter[author.name][nin]=Ann", [2]),
    ("filter[author.karma][between]=0,10", [1, 6]),
    ("filter[author.joined][gte]=2019-12-31", [1, 6]),
    ("filter[author.karma][null]=true", [2, 3, 4]),
    ("filter[author.karma][null]=false", [1, 6]),
    ("filter[author.name][null]=1", [3, 4]),
    ("filter[author.name]=Zed", []),  # the unpublished author's posts are not found through it
]

# At least one related record satisfies the condition; the unpublished tag `hidden` counts for none.
TO_MANY = [
    ("filter[tags.slug]=news", [1, 2, 6]),
    ("filter[tags.slug][ne]=news", [1, 6]),
    ("filter[tags.weight][gt]=1", [1, 6]),
    ("filter[tags.weight][gte]=2", [1, 6]),
    ("filter[tags.weight][lt]=2", [1, 2, 6]),
    ("filter[tags.weight][lte]=1", [1, 2, 6]),
    ("filter[tags.slug][like]=PO", [1, 6]),
    ("filter[tags.slug][in]=news,sport", [1, 2, 6]),
    ("filter[tags.slug][nin]=news,sport", [6]),
    ("filter[tags.weight][between]=2,5", [1, 6]),
    ("filter[tags.weight][null]=true", [6]),
    ("filter[tags.weight][null]=false", [1, 2, 6]),
    ("filter[tags.slug]=hidden", []),
    ("filter[comments.body][like]=great", [1]),  # two matching comments, one post
    ("filter[comments.body]=buy pills", []),  # outside the comments' `query`
]


@pytest.mark.parametrize(("query", "expected"), TO_ONE)
async def test_every_operator_works_on_a_to_one_path(site, query, expected):
    assert await ids(site, query) == expected


@pytest.mark.parametrize(("query", "expected"), TO_MANY)
async def test_every_operator_works_on_a_to_many_path(site, query, expected):
    assert await ids(site, query) == expected


async def test_a_to_many_path_never_repeats_a_row_and_counts_each_once(site):
    first = await listing(site, "filter[tags.slug][in]=news,sport,tech&fields=id&limit=2")
    assert [record["id"] for record in first["data"]] == [1, 2]
    assert first["meta"]["total"] == 3
    assert first["meta"]["has_more"] is True
    second = await listing(site, "filter[tags.slug][in]=news,sport,tech&fields=id&limit=2&page=2")
    assert [record["id"] for record in second["data"]] == [6]


async def test_paths_combine_with_each_other_and_with_plain_filters(site):
    assert await ids(site, "filter[author.name]=Ann&filter[tags.slug]=tech") == [6]
    assert await ids(site, "filter[tags.slug]=news&filter[tags.slug]=sport") == [1, 6]
    assert await ids(site, "filter[tags.slug]=news&filter[title][like]=eta") == [2, 6]


async def test_a_path_combines_with_search_sort_and_count_modes(site):
    assert await ids(site, "search=eta&filter[tags.slug]=news") == [2, 6]
    assert await ids(site, "filter[tags.slug]=news&sort=-title") == [6, 2, 1]
    for count in ("none", "estimated"):
        body = await listing(site, f"filter[tags.slug]=news&fields=id&count={count}")
        assert [record["id"] for record in body["data"]] == [1, 2, 6]
        assert body["meta"]["total"] in ((None,) if count == "none" else (3,))


async def test_cursors_walk_a_path_filtered_list_without_loss_or_repeat(site):
    seen: list[int] = []
    query = "filter[tags.slug][in]=news,tech&fields=id&limit=1"
    body = await listing(site, query)
    while True:
        seen += [record["id"] for record in body["data"]]
        cursor = body["meta"]["next_cursor"]
        if cursor is None:
            break
        body = await listing(site, f"{query}&after={cursor}")
    assert seen == [1, 2, 6]


async def test_a_cursor_made_for_another_path_value_is_refused(site):
    body = await listing(site, "filter[tags.slug]=news&fields=id&limit=1")
    cursor = body["meta"]["next_cursor"]
    refused = await listing(site, f"filter[tags.slug]=sport&after={cursor}", status=422)
    assert refused["error"] == "validation_failed"
    assert list(refused["details"]) == ["after"]


async def test_a_path_value_that_does_not_convert_is_a_422_keyed_as_written(site):
    body = await listing(site, "filter[author.karma][gte]=lots", status=422)
    assert body["error"] == "validation_failed"
    assert list(body["details"]) == ["filter[author.karma][gte]"]


async def test_related_records_load_next_to_a_path_filter(site):
    body = await listing(site, "filter[tags.slug]=tech&with=author,tags&fields=title")
    assert body["data"] == [
        {
            "id": 6,
            "title": "Zeta",
            "author": {"id": 1, "name": "Ann", "karma": 10, "joined": "2020-01-01"},
            "tags": [
                {"id": 1, "slug": "news", "weight": 1},
                {"id": 2, "slug": "sport", "weight": 2},
                {"id": 3, "slug": "tech", "weight": None},
            ],
        }
    ]


# -- what a token may not test -----------------------------------------------------------------------

HIDDEN = [
    # a column the related object does not publish (declared in `filterable`)
    ("filter[author.email]", "ann@secret.test", "nobody@secret.test"),
    ("filter[author.email][like]", "secret", "no-such-text"),
    ("filter[author.email][null]", "false", "true"),
    # not declared in `filterable`, though the relation loads the field
    ("filter[author.id]", "1", "4"),
    # a column the related table has but nothing shows
    ("filter[author.published]", "false", "true"),
    # deeper than one level
    ("filter[author.posts.title]", "Alpha", "Nope"),
    # a relation that is not a relation of this object
    ("filter[writer.name]", "Ann", "Nobody"),
]


@pytest.mark.parametrize(("key", "existing", "missing"), HIDDEN)
async def test_a_path_the_token_cannot_read_is_ignored_whether_or_not_the_value_exists(
    site, key, existing, missing
):
    answers = [await listing(site, f"{key}={value}&fields=id") for value in (existing, missing)]
    assert answers[0]["data"] == answers[1]["data"] == [{"id": n} for n in (1, 2, 3, 4, 6)]
    assert answers[0]["meta"]["total"] == answers[1]["meta"]["total"] == 5
    assert answers[0]["meta"]["ignored"] == [key]
    assert answers[1]["meta"]["ignored"] == [key]


async def test_a_strict_client_gets_a_400_naming_a_path_it_cannot_use_whatever_the_value(site):
    headers = {**site.headers, "Prefer": "handling=strict"}
    for value in ("ann@secret.test", "nobody@secret.test"):
        response = await site.client.get(f"{API}?filter[author.email]={value}", headers=headers)
        assert response.status_code == 400
        assert response.json()["details"] == {"ignored": ["filter[author.email]"]}
    usable = await site.client.get(f"{API}?filter[author.name]=Ann&fields=id", headers=headers)
    assert [record["id"] for record in usable.json()["data"]] == [1, 6]


async def test_an_unpublished_related_record_cannot_be_found_through_a_path(site):
    """Author 3 (Zed, karma 99) is unpublished: a post of theirs reads as having no author."""
    for query in ("filter[author.name]=Zed", "filter[author.karma][gte]=99", "filter[author.name]=Nobody"):
        body = await listing(site, f"{query}&fields=id")
        assert body["data"] == []
        assert body["meta"]["total"] == 0


async def test_a_path_needs_what_with_needs_and_nothing_of_the_related_objects_scope(site):
    """A relation loads with the object's own read scope (docs/declarations.md); a path through it is
    usable exactly when `with` loads it, so a `posts.read` token without `authors.read` uses both."""
    loaded = await listing(site, "with=author&fields=id&filter[author.name]=Bob")
    assert loaded["data"] == [{"id": 2, "author": {"id": 2, "name": "Bob", "karma": None, "joined": None}}]
    assert "ignored" not in loaded["meta"]


async def test_a_token_without_the_objects_read_scope_cannot_filter_through_its_relations(site):
    for scopes, status in (("authors.read", 404), ("posts.write", 403)):
        headers = site.auth(await site.token(scopes))
        response = await site.client.get(f"{API}?filter[author.name]=Ann", headers=headers)
        assert response.status_code == status, response.text
        assert "data" not in response.json()


async def test_a_changed_related_record_changes_the_answer_and_its_tag(site):
    query = f"{API}?filter[author.name]=Ann&fields=id"
    first = await site.client.get(query, headers=site.headers)
    assert [record["id"] for record in first.json()["data"]] == [1, 6]
    await site.database.execute(authors.update().where(authors.c.id == 1).values(name="Anne"))
    again = await site.client.get(query, headers={**site.headers, "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 200
    assert again.json()["data"] == []


# -- what a client is told -----------------------------------------------------------------------------


async def test_objects_lists_the_usable_paths(site):
    response = await site.client.get("/api/pb/v1/objects", headers=site.auth(await site.token("*")))
    posts = next(item for item in response.json()["data"] if item["name"] == "posts")
    assert posts["filterable"] == [
        "title",
        "author.name",
        "author.karma",
        "author.joined",
        "tags.slug",
        "tags.weight",
        "comments.body",
    ]


async def test_the_openapi_document_lists_the_usable_paths_typed_by_the_related_field(site):
    response = await site.client.get("/api/pb/v1/openapi.json", headers=site.headers)
    document = response.json()
    components = document["components"]["parameters"]
    parameters = [  # the filters are components the list and the change feed share
        components[parameter["$ref"].rsplit("/", 1)[1]] if "$ref" in parameter else parameter
        for parameter in document["paths"]["/objects/posts"]["get"]["parameters"]
    ]
    by_name = {parameter.get("name"): parameter for parameter in parameters if "name" in parameter}
    assert by_name["filter[author.karma]"]["schema"] == {"$ref": "#/components/schemas/Filter.integer"}
    assert by_name["filter[author.joined]"]["schema"] == {"$ref": "#/components/schemas/Filter.date"}
    assert by_name["filter[tags.slug]"]["schema"] == {"$ref": "#/components/schemas/Filter.text"}
    assert "filter[author.email]" not in by_name
    operators = by_name["filter"]["schema"]["properties"]
    assert operators["filter[author.karma][between]"] == {"$ref": "#/components/schemas/Filter.integer.pair"}
    assert operators["filter[tags.slug][in]"] == {"$ref": "#/components/schemas/Filter.text.list"}
    assert not any(key.startswith("filter[author.email]") for key in operators)
