"""The list envelope and its records (docs/query.md, "The list answer"), and object caching
(docs/endpoints.md, "Caching")."""

from __future__ import annotations

import pytest

API = "/api/pb/v1/objects/articles"
ARTICLES = f"http://testserver{API}"


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read"))
    return demo


async def get(host, query: str = ""):
    return await host.client.get(f"{API}?{query}" if query else API, headers=host.headers)


async def test_a_list_answer_is_data_meta_and_links_exactly(reader):
    query = "filter[id][in]=1,4&fields=title,price,rating,views,featured,published_on,created_at,author_id"
    response = await get(reader, query)
    assert response.status_code == 200
    assert response.json() == {
        "data": [
            {
                "id": 1,
                "title": "Hello world",
                "price": "19.99",
                "rating": 4.5,
                "views": 10,
                "featured": False,
                "published_on": "2026-01-01",
                "created_at": "2026-01-01T12:00:00+00:00",
                "author_id": 1,
            },
            {
                "id": 4,
                "title": "Quarterly report",
                "price": None,
                "rating": None,
                "views": None,
                "featured": True,
                "published_on": "2026-01-04",
                "created_at": "2026-01-04T12:00:00+00:00",
                "author_id": None,
            },
        ],
        "meta": {
            "total": 2,
            "count": 2,
            "limit": 5,
            "offset": 0,
            "has_more": False,
            "next_cursor": None,
            "prev_cursor": None,
        },
        "links": {"self": f"{ARTICLES}?{query}", "next": None, "prev": None},
    }


async def test_json_values_keep_their_types(reader):
    records = (await get(reader, "limit=6")).json()["data"]
    by_id = {record["id"]: record for record in records}
    # Decimals are strings with the column's scale; floats are numbers; booleans are booleans.
    assert [by_id[i]["price"] for i in (1, 2, 3, 6)] == ["19.99", "10.00", "5.50", "100.00"]
    assert isinstance(by_id[1]["rating"], float) and by_id[1]["rating"] == 4.5
    assert by_id[2]["featured"] is True and by_id[1]["featured"] is False and by_id[7]["featured"] is None
    assert by_id[7]["published_on"] is None and by_id[2]["published_on"] == "2026-01-02"
    assert all(record["created_at"].endswith("+00:00") for record in records)
    assert by_id[2]["title"] == "Новости компании" and by_id[3]["body"] == "back\\slash here"


async def test_the_envelope_is_not_the_administration_grid_envelope(reader):
    body = (await get(reader)).json()
    assert set(body) == {"data", "meta", "links"}
    assert not {"success", "results"} & set(body)


async def test_a_list_is_json_and_private_no_cache(reader):
    response = await get(reader)
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "private, no-cache"


async def test_a_refused_list_is_private_no_cache_too(reader):
    response = await get(reader, "filter[views]=x")
    assert response.status_code == 422
    assert response.headers["cache-control"] == "private, no-cache"


async def test_only_published_rows_are_served_or_counted(reader):
    first = (await get(reader)).json()
    second = (await get(reader, "offset=5")).json()
    assert first["meta"]["total"] == 6
    assert 5 not in [record["id"] for record in first["data"] + second["data"]]


async def test_meta_ignored_is_absent_when_nothing_was_dropped(reader):
    body = (await get(reader, "filter[category]=news&sort=-views&fields=title&with=author&limit=2")).json()
    assert "ignored" not in body["meta"]


async def test_meta_ignored_names_every_dropped_item_as_written_in_query_order(reader):
    query = "filter[secret]=1&filter[title][regex]=x&sort=-secret&fields=secret&with=author.posts&limit=abc"
    body = (await get(reader, query)).json()
    assert body["meta"]["ignored"] == [
        "filter[secret]",
        "filter[title][regex]",
        "sort=-secret",
        "fields=secret",
        "with=author.posts",
        "limit=abc",
    ]


async def test_meta_ignored_names_list_items_one_by_one(reader):
    query = "sort=-secret,title,nope&fields=title,secret&with=author,comments.author"
    body = (await get(reader, query)).json()
    assert body["meta"]["ignored"] == ["sort=-secret", "sort=nope", "fields=secret", "with=comments.author"]


async def test_parameters_outside_the_grammar_are_named_as_ignored_as_written(reader):
    body = (await get(reader, "utm_source=app&_=1712345678")).json()
    assert body["meta"]["ignored"] == ["utm_source=app", "_=1712345678"]


async def test_a_number_given_twice_uses_the_last_and_names_the_first(reader):
    body = (await get(reader, "limit=2&limit=3")).json()
    assert body["meta"]["limit"] == 3
    assert body["meta"]["ignored"] == ["limit=2"]


async def test_a_422_answer_is_error_message_and_details(reader):
    response = await get(reader, "filter[price][gte]=cheap")
    assert response.json() == {
        "error": "validation_failed",
        "message": "The given data was invalid.",
        "details": {"filter[price][gte]": ["must be a number"]},
    }


async def test_head_answers_like_get_without_a_body(reader):
    response = await reader.client.head(API, headers=reader.headers)
    assert response.status_code == 200 and response.content == b""
    assert response.headers["cache-control"] == "private, no-cache"


async def test_a_trailing_slash_lists_the_same_records(reader):
    with_slash = await reader.client.get(f"{API}/?fields=id", headers=reader.headers)
    assert with_slash.json()["data"] == (await get(reader, "fields=id")).json()["data"]
