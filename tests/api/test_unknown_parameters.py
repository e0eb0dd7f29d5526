"""docs/query.md, "Ignored parameters": a query parameter a read does not take (`limt=1`, `utm_source=x`)
changes nothing, is named as written in `meta.ignored` of a list or change feed, stays in `links`, and
under `Prefer: handling=strict` is a 400 on list, show and changes like any other ignored item."""

from __future__ import annotations

import pytest

API = "/api/pb/v1"
STRICT = {"Prefer": "handling=strict"}


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read"))
    return demo


async def get(reader, path: str, **headers: str):
    return await reader.client.get(f"{API}{path}", headers={**reader.headers, **headers})


async def test_a_typo_in_a_list_query_is_named_as_written_and_changes_nothing(reader):
    plain = (await get(reader, "/objects/articles?sort=id")).json()
    typos = await get(reader, "/objects/articles?sort=id&limt=1&sorts=-id&category=news&utm_source=x")
    assert typos.status_code == 200
    body = typos.json()
    assert body["data"] == plain["data"]
    assert body["meta"]["total"] == plain["meta"]["total"]
    assert body["meta"]["ignored"] == ["limt=1", "sorts=-id", "category=news", "utm_source=x"]
    assert "ignored" not in plain["meta"]


async def test_links_keep_the_unknown_parameters_as_written(reader):
    body = (await get(reader, "/objects/articles?sort=id&limit=2&utm_source=news%20letter")).json()
    assert body["meta"]["ignored"] == ["utm_source=news letter"]
    for link in (body["links"]["self"], body["links"]["next"]):
        assert "utm_source=news%20letter" in link
    cursor = body["meta"]["next_cursor"]
    paged = (await get(reader, f"/objects/articles?sort=id&limit=2&after={cursor}&utm_source=x")).json()
    assert paged["meta"]["ignored"] == ["utm_source=x"]
    assert "utm_source=x" in paged["links"]["next"]


async def test_strict_handling_refuses_an_unknown_parameter_on_list_show_and_changes(reader):
    for path in ("/objects/articles?limt=1", "/objects/articles/1?limt=1", "/changes/articles?limt=1"):
        response = await get(reader, path, **STRICT)
        assert response.status_code == 400, path
        body = response.json()
        assert body["error"] == "bad_request" and body["details"] == {"ignored": ["limt=1"]}, path
        assert response.headers["preference-applied"] == "handling=strict"
        lenient = await get(reader, path)
        assert lenient.status_code == 200, path


async def test_a_show_names_the_list_parameters_it_does_not_take_under_strict_handling(reader):
    response = await get(reader, "/objects/articles/1?fields=title&sort=title&filter[id]=2", **STRICT)
    assert response.json()["details"] == {"ignored": ["sort=title", "filter[id]=2"]}
    fine = await get(reader, "/objects/articles/1?fields=title&with=author", **STRICT)
    assert fine.status_code == 200 and fine.json()["data"]["title"] == "Hello world"


async def test_the_change_feed_names_what_it_ignored_and_takes_since_limit_fields_and_with(reader):
    start = (await get(reader, "/changes/articles")).json()["meta"]["next"]
    await reader.database.execute("UPDATE demo_articles SET views = 1 WHERE id IN (1, 2)")
    query = f"since={start}&limit=1&fields=title&with=author&limt=1&fields=secret"
    response = await get(reader, f"/changes/articles?{query}")
    assert response.status_code == 200
    body = response.json()
    assert body["meta"]["ignored"] == ["limt=1", "fields=secret"]
    assert [entry["id"] for entry in body["data"]] == [1] and body["meta"]["has_more"] is True
    assert set(body["data"][0]["record"]) == {"id", "title", "author"}
    strict = await get(reader, f"/changes/articles?since={start}&limit=1", **STRICT)
    assert strict.status_code == 200 and "ignored" not in strict.json()["meta"]
