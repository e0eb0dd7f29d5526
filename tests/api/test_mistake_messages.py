"""The answers a newcomer gets after a typical mistake (issue 25, point 7): each says what to do next."""

import pytest

from tests.support.demo import create_demo, demo_registry

API = "/api/pb/v1/objects/articles"


@pytest.fixture
async def writer(sqlite_database, host_factory):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    host.headers = host.auth(await host.token("articles.read,articles.write", user_id="42"))
    return host


async def test_a_title_over_the_column_length_and_the_max_rule_is_reported_once(writer):
    response = await writer.client.post(API, headers=writer.headers, json={"title": "x" * 300})
    assert response.status_code == 422
    assert response.json()["details"] == {
        "title": ["The title field must not be greater than 200 characters."]
    }


async def test_a_datetime_that_is_not_one_names_the_format_expected(writer):
    response = await writer.client.post(
        API, headers=writer.headers, json={"title": "Soon", "created_at": "tomorrow"}
    )
    assert response.status_code == 422
    assert response.json()["details"]["created_at"] == [
        "The created at field must be a valid date and time (YYYY-MM-DDTHH:MM[:SS][+HH:MM], or YYYY-MM-DD)."
    ]


async def test_a_date_that_is_not_one_names_the_format_expected(writer):
    response = await writer.client.post(
        API, headers=writer.headers, json={"title": "Soon", "published_on": "tomorrow"}
    )
    assert response.json()["details"]["published_on"] == [
        "The published on field must be a valid date (YYYY-MM-DD)."
    ]


async def test_a_misspelt_body_field_suggests_the_nearest_writable_one(writer):
    response = await writer.client.post(API, headers=writer.headers, json={"titel": "Typo"})
    assert response.status_code == 422
    assert response.json()["details"]["titel"] == ["is not writable (did you mean 'title'?)"]


async def test_a_field_like_no_writable_one_is_only_not_writable(writer):
    response = await writer.client.patch(f"{API}/1", headers=writer.headers, json={"secret": "x"})
    assert response.json()["details"] == {"secret": ["is not writable"]}


async def test_a_page_size_past_the_maximum_is_clamped_to_it_and_not_ignored(writer):
    response = await writer.client.get(f"{API}?limit=1000000", headers=writer.headers)
    assert response.status_code == 200
    meta = response.json()["meta"]
    assert meta["limit"] == 6  # the demo's max_per_page
    assert "ignored" not in meta


@pytest.mark.parametrize("written", ["2147483648", "99999999999999999999", "9" * 5000])
async def test_a_page_size_past_the_largest_number_is_ignored_and_named_as_docs_query_says(writer, written):
    response = await writer.client.get(f"{API}?limit={written}", headers=writer.headers)
    assert response.status_code == 200
    meta = response.json()["meta"]
    assert meta["limit"] == 5  # the demo's per_page: the default applies
    assert meta["ignored"] == [f"limit={written}"]


async def test_a_page_size_that_is_not_a_number_is_ignored_and_named(writer):
    response = await writer.client.get(f"{API}?limit=lots", headers=writer.headers)
    assert response.json()["meta"]["ignored"] == ["limit=lots"]
    assert response.json()["meta"]["limit"] == 5  # the demo's per_page
