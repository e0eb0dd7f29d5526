"""docs/query.md `sort`, through HTTP on every database.

Sortable demo fields: id, title, price, views, published_on, created_at. Prices 10.00 tie (articles 2
and 7), which is where the primary-key tie-breaker shows.
"""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry
from tests.support.demo import DECLARATIONS

API = "/api/pb/v1/objects/articles"


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read"))
    return demo


async def listing(host, query: str) -> dict:
    response = await host.client.get(f"{API}?{query}&fields=id&limit=6", headers=host.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def order(host, query: str) -> list[int]:
    body = await listing(host, query)
    assert "ignored" not in body["meta"], body["meta"]
    return [record["id"] for record in body["data"]]


async def host_with(reader, host_factory, **changes):
    registry = ApiRegistry()
    registry.register("articles", {**DECLARATIONS["articles"], **changes})
    host = await host_factory(reader.database, registry)
    host.headers = reader.headers
    return host


async def test_without_sort_records_come_by_primary_key_ascending(reader):
    assert await order(reader, "") == [1, 2, 3, 4, 6, 7]


async def test_sort_ascending_and_with_a_minus_descending(reader):
    assert await order(reader, "sort=views&filter[views][null]=false") == [1, 2, 3, 6, 7]
    assert await order(reader, "sort=-views&filter[views][null]=false") == [7, 6, 3, 2, 1]
    assert await order(reader, "sort=-id") == [7, 6, 4, 3, 2, 1]


async def test_decimals_sort_as_numbers_not_as_text(reader):
    assert await order(reader, "sort=price&filter[price][null]=false") == [3, 2, 7, 1, 6]


async def test_dates_and_datetimes_sort_in_time_order(reader):
    assert await order(reader, "sort=-created_at") == [7, 6, 4, 3, 2, 1]
    assert await order(reader, "sort=-published_on&filter[published_on][null]=false") == [6, 4, 3, 2, 1]


async def test_text_sorts_by_the_databases_collation(reader):
    # Latin before Cyrillic and the same letters in the same order under every supported collation.
    assert await order(reader, "sort=title") == [1, 6, 4, 3, 7, 2]
    assert await order(reader, "sort=-title") == [2, 7, 3, 4, 6, 1]


async def test_several_sort_fields_apply_in_the_order_given(reader):
    assert await order(reader, "sort=price,-views&filter[price][null]=false") == [3, 7, 2, 1, 6]


async def test_a_repeated_sort_parameter_reads_as_one_list(reader):
    assert await order(reader, "sort=price&sort=-views&filter[price][null]=false") == [3, 7, 2, 1, 6]


async def test_the_primary_key_breaks_ties_ascending_whatever_the_direction(reader):
    assert await order(reader, "sort=price&filter[price][null]=false") == [3, 2, 7, 1, 6]
    assert await order(reader, "sort=-price&filter[price][null]=false") == [6, 1, 2, 7, 3]


async def test_pages_sorted_on_a_tied_field_neither_repeat_nor_skip_a_record(reader):
    seen: list[int] = []
    for offset in range(0, 6, 2):
        response = await reader.client.get(
            f"{API}?sort=-price&fields=id&limit=2&offset={offset}", headers=reader.headers
        )
        seen += [record["id"] for record in response.json()["data"]]
    assert sorted(seen) == [1, 2, 3, 4, 6, 7]
    assert seen.index(2) < seen.index(7)


async def test_rows_without_a_value_sort_where_the_database_puts_nulls(reader):
    # Not fixed by the contract: SQLite and MariaDB put NULL first when ascending, PostgreSQL last.
    assert await order(reader, "sort=views") in ([4, 1, 2, 3, 6, 7], [1, 2, 3, 6, 7, 4])


@pytest.mark.parametrize("item", ["-secret", "secret", "body", "-category", "nope", "author", "-"])
async def test_a_sort_field_outside_the_whitelist_is_ignored_and_named(reader, item):
    body = await listing(reader, f"sort={item}")
    assert [record["id"] for record in body["data"]] == [1, 2, 3, 4, 6, 7]
    assert body["meta"]["ignored"] == [f"sort={item}"]


async def test_the_valid_sort_fields_still_apply_when_others_are_ignored(reader):
    body = await listing(reader, "sort=-secret,-views,title&filter[views][null]=false")
    assert [record["id"] for record in body["data"]] == [7, 6, 3, 2, 1]
    assert body["meta"]["ignored"] == ["sort=-secret"]


async def test_a_field_sorted_twice_keeps_its_first_direction(reader):
    body = await listing(reader, "sort=views,-views&filter[views][null]=false")
    assert [record["id"] for record in body["data"]] == [1, 2, 3, 6, 7]
    assert body["meta"]["ignored"] == ["sort=-views"]


async def test_without_sort_the_default_sort_applies(reader, host_factory):
    host = await host_with(reader, host_factory, default_sort="-created_at")
    assert await order(host, "") == [7, 6, 4, 3, 2, 1]


async def test_a_given_sort_replaces_the_default_sort(reader, host_factory):
    host = await host_with(reader, host_factory, default_sort="-created_at")
    assert await order(host, "sort=views&filter[views][null]=false") == [1, 2, 3, 6, 7]


async def test_the_default_sort_applies_when_every_sort_field_was_ignored(reader, host_factory):
    host = await host_with(reader, host_factory, default_sort="-created_at")
    body = await listing(host, "sort=secret")
    assert [record["id"] for record in body["data"]] == [7, 6, 4, 3, 2, 1]
    assert body["meta"]["ignored"] == ["sort=secret"]


async def test_the_default_sort_is_broken_by_the_primary_key_ascending(reader, host_factory):
    # `category` need not be sortable by clients to be the site's own default order.
    ascending = await host_with(reader, host_factory, default_sort="category")
    assert await order(ascending, "") == [2, 4, 1, 6, 7, 3]
    descending = await host_with(reader, host_factory, default_sort=["-category"])
    assert await order(descending, "") == [3, 1, 6, 7, 2, 4]
