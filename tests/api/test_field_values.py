"""A value reads the same in a filter and in a write body, on every database (docs/query.md, "filter";
docs/writes.md): one grammar per kind, with the few differences a query string's text imposes.
"""

from __future__ import annotations

import pytest

API = "/api/pb/v1/objects/articles"


@pytest.fixture
async def writer(demo):
    demo.headers = demo.auth(await demo.token("articles.read,articles.write"))
    return demo


async def created(host, body: dict) -> dict:
    response = await host.client.post(API, headers=host.headers, json={"title": "Values", **body})
    assert response.status_code == 201, response.text
    return response.json()["data"]


async def found(host, query: str) -> list[int]:
    response = await host.client.get(f"{API}?{query}&fields=id&limit=6", headers=host.headers)
    assert response.status_code == 200, response.text
    return [record["id"] for record in response.json()["data"]]


async def refusal(host, query: str) -> dict:
    response = await host.client.get(f"{API}?{query}", headers=host.headers)
    assert response.status_code == 422, response.text
    return response.json()["details"]


async def test_a_decimal_written_as_point_five_is_stored_and_found_the_same_way(writer):
    record = await created(writer, {"price": ".5"})
    assert record["price"] == "0.50"
    assert await found(writer, "filter[price]=.5") == [record["id"]]
    assert await found(writer, "filter[price]=%2B0.50") == [record["id"]]
    signed = await created(writer, {"price": "+7"})
    assert signed["price"] == "7.00"


async def test_a_decimal_with_an_exponent_is_refused_in_a_body_and_in_a_filter(writer):
    response = await writer.client.post(API, headers=writer.headers, json={"title": "x", "price": "1e3"})
    assert response.status_code == 422
    assert response.json()["details"] == {"price": ["The price field must be a number."]}
    assert await refusal(writer, "filter[price]=1e3") == {"filter[price]": ["must be a number"]}


async def test_a_datetime_with_an_offset_is_the_same_instant_in_a_body_and_in_a_filter(writer):
    record = await created(writer, {"created_at": "2026-02-01T10:00:00+02:00"})
    assert record["created_at"] == "2026-02-01T08:00:00+00:00"
    assert await found(writer, "filter[created_at]=2026-02-01T08:00:00Z") == [record["id"]]
    assert await found(writer, "filter[created_at]=2026-02-01T10:00:00%2B02:00") == [record["id"]]


async def test_a_datetime_in_a_form_the_body_refuses_is_refused_by_a_filter_too(writer):
    response = await writer.client.post(
        API, headers=writer.headers, json={"title": "x", "created_at": "2026-02-01T10"}
    )
    assert response.status_code == 422
    message = "must be a date-time (ISO 8601, e.g. 2024-05-01T12:00:00+00:00)"
    assert await refusal(writer, "filter[created_at]=2026-02-01T10") == {"filter[created_at]": [message]}


async def test_a_filter_takes_1_and_0_for_a_boolean_where_a_body_takes_only_true_and_false(writer):
    response = await writer.client.post(API, headers=writer.headers, json={"title": "x", "featured": 1})
    assert response.status_code == 422
    assert response.json()["details"] == {"featured": ["The featured field must be true or false."]}
    assert await found(writer, "filter[featured]=1") == await found(writer, "filter[featured]=true")
