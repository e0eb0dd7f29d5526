"""The list envelope's meta and links, and `limit` / `offset` / `page` (docs/query.md).

The demo declares `per_page` 5 and `max_per_page` 6 for articles, six of which are published
(1, 2, 3, 4, 6, 7); authors declare neither, so they page by the defaults 20 and 100.
"""

from __future__ import annotations

import pytest

API = "/api/pb/v1/objects"
ARTICLES = f"http://testserver{API}/articles"


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read,authors.read"))
    return demo


async def listing(host, query: str = "", name: str = "articles", headers: dict | None = None) -> dict:
    url = f"{API}/{name}?{query}" if query else f"{API}/{name}"
    response = await host.client.get(url, headers={**host.headers, **(headers or {})})
    assert response.status_code == 200, response.text
    return response.json()


def ids(body: dict) -> list[int]:
    return [record["id"] for record in body["data"]]


def offset_meta(body: dict) -> dict:
    """`meta` without its cursors (docs/query.md, "Cursors"; tested in test_list_cursors.py)."""
    meta = dict(body["meta"])
    assert {"next_cursor", "prev_cursor"} <= set(meta)
    return {key: value for key, value in meta.items() if not key.endswith("_cursor")}


# -- limit, offset, page ------------------------------------------------------------------------------


async def test_the_first_page_has_per_page_records_and_links_to_the_next(reader):
    body = await listing(reader)
    assert ids(body) == [1, 2, 3, 4, 6]
    assert offset_meta(body) == {"total": 6, "count": 5, "limit": 5, "offset": 0, "has_more": True}
    assert body["links"] == {"self": ARTICLES, "next": f"{ARTICLES}?offset=5", "prev": None}


async def test_the_last_page_has_no_next_link_and_links_back(reader):
    body = await listing(reader, "offset=5")
    assert ids(body) == [7]
    assert offset_meta(body) == {"total": 6, "count": 1, "limit": 5, "offset": 5, "has_more": False}
    assert body["links"] == {"self": f"{ARTICLES}?offset=5", "next": None, "prev": f"{ARTICLES}?offset=0"}


async def test_limit_sets_the_page_size(reader):
    body = await listing(reader, "limit=2&offset=2")
    assert ids(body) == [3, 4]
    assert offset_meta(body) == {"total": 6, "count": 2, "limit": 2, "offset": 2, "has_more": True}


async def test_a_limit_above_max_per_page_is_clamped_silently(reader):
    body = await listing(reader, "limit=50")
    assert ids(body) == [1, 2, 3, 4, 6, 7]
    assert offset_meta(body) == {"total": 6, "count": 6, "limit": 6, "offset": 0, "has_more": False}


async def test_an_object_without_page_sizes_pages_by_20_up_to_100(reader):
    assert (await listing(reader, name="authors"))["meta"]["limit"] == 20
    assert (await listing(reader, "limit=1000", name="authors"))["meta"]["limit"] == 100


async def test_limit_0_counts_without_reading_records(reader):
    body = await listing(reader, "limit=0&filter[category]=news")
    assert body["data"] == []
    assert offset_meta(body) == {"total": 3, "count": 0, "limit": 0, "offset": 0, "has_more": True}
    assert body["links"]["next"] is None and body["links"]["prev"] is None


async def test_page_is_one_based_and_sets_the_offset(reader):
    body = await listing(reader, "page=2&limit=2")
    assert ids(body) == [3, 4]
    assert body["meta"]["offset"] == 2
    assert body["links"] == {
        "self": f"{ARTICLES}?page=2&limit=2",
        "next": f"{ARTICLES}?limit=2&offset=4",
        "prev": f"{ARTICLES}?limit=2&offset=0",
    }


async def test_page_1_is_the_first_page(reader):
    assert ids(await listing(reader, "page=1&limit=2")) == [1, 2]


async def test_offset_wins_over_page(reader):
    body = await listing(reader, "page=3&offset=1&limit=2")
    assert ids(body) == [2, 3]
    assert body["meta"]["offset"] == 1


async def test_an_offset_past_the_end_gives_an_empty_page_that_links_back(reader):
    body = await listing(reader, "offset=10")
    assert body["data"] == []
    assert offset_meta(body) == {"total": 6, "count": 0, "limit": 5, "offset": 10, "has_more": False}
    assert body["links"] == {"self": f"{ARTICLES}?offset=10", "next": None, "prev": f"{ARTICLES}?offset=5"}


@pytest.mark.parametrize(
    ("query", "has_more"),
    [
        ("limit=6", False),
        ("limit=5", True),
        ("offset=1&limit=5", False),
        ("offset=0&limit=1", True),
        ("filter[id]=7", False),
        ("filter[id]=5", False),
    ],
)
async def test_has_more_is_whether_offset_plus_count_is_below_total(reader, query, has_more):
    meta = (await listing(reader, query))["meta"]
    assert meta["has_more"] is has_more
    assert meta["has_more"] == (meta["offset"] + meta["count"] < meta["total"])


# -- numbers that are ignored -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written",
    [
        "limit=abc",
        "limit=-1",
        "limit=1.5",
        "limit=",
        "limit=١٢",
        "limit=%EF%BC%93",
        "offset=-3",
        "offset=x",
        "offset=99999999999",
        "page=0",
        "page=x",
        "page=-2",
    ],
)
async def test_a_number_that_is_not_ascii_digits_or_too_large_is_ignored_and_named(reader, written):
    body = await listing(reader, written)
    assert ids(body) == [1, 2, 3, 4, 6]
    assert body["meta"]["limit"] == 5 and body["meta"]["offset"] == 0
    decoded = {"limit=%EF%BC%93": "limit=３"}.get(written, written)
    assert body["meta"]["ignored"] == [decoded]


async def test_the_largest_accepted_number_is_two_to_the_31_minus_1(reader):
    body = await listing(reader, "limit=2147483647&offset=2147483647")
    assert body["data"] == []
    assert body["meta"]["limit"] == 6 and body["meta"]["offset"] == 2147483647
    assert "ignored" not in body["meta"]


async def test_leading_zeros_are_still_digits(reader):
    body = await listing(reader, "limit=002&offset=0001")
    assert ids(body) == [2, 3]


# -- links ------------------------------------------------------------------------------------------


async def test_links_keep_every_other_parameter_and_replace_only_the_offset(reader):
    query = "filter[category]=news&sort=-views&fields=title&limit=2&utm_source=app"
    first = await listing(reader, query)
    assert ids(first) == [7, 6]
    assert first["links"] == {
        "self": f"{ARTICLES}?{query}",
        "next": f"{ARTICLES}?{query}&offset=2",
        "prev": None,
    }
    last = await listing(reader, f"{query}&offset=2")
    assert ids(last) == [1]
    assert last["links"] == {
        "self": f"{ARTICLES}?{query}&offset=2",
        "next": None,
        "prev": f"{ARTICLES}?{query}&offset=0",
    }


async def test_links_keep_ignored_parameters_as_they_were_sent(reader):
    body = await listing(reader, "sort=secret&limit=2")
    assert body["links"]["next"] == f"{ARTICLES}?sort=secret&limit=2&offset=2"


async def test_links_percent_encode_values_so_they_read_back_the_same(reader):
    query = "filter[title][like]=%D0%BD%D0%BE%D0%B2%D0%BE%D1%81%D1%82%D0%B8%20%2B%25&limit=1"  # "новости +%"
    body = await listing(reader, query)
    assert body["links"]["self"] == f"{ARTICLES}?{query}"


async def test_links_are_absolute_addresses_on_the_host_the_client_used(reader):
    body = await listing(reader, "limit=2", headers={"Host": "shop.example.org"})
    assert body["links"]["next"] == "http://shop.example.org/api/pb/v1/objects/articles?limit=2&offset=2"


async def test_following_next_links_visits_every_record_once(reader):
    seen: list[int] = []
    url: str | None = f"{ARTICLES}?sort=-price&limit=2"
    while url is not None:
        response = await reader.client.get(url, headers=reader.headers)
        seen += ids(response.json())
        url = response.json()["links"]["next"]
    assert sorted(seen) == [1, 2, 3, 4, 6, 7] and len(seen) == 6


async def test_following_prev_links_walks_back_to_the_first_page(reader):
    url: str | None = f"{ARTICLES}?limit=2&offset=4"
    offsets = []
    while url is not None:
        body = (await reader.client.get(url, headers=reader.headers)).json()
        offsets.append(body["meta"]["offset"])
        url = body["links"]["prev"]
    assert offsets == [4, 2, 0]
