"""docs/caching.md: ETag on reads, 304 for a current copy, If-Match on updates and deletes."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.demo import demo_registry

API = "/api/pb/v1/objects"


@pytest.fixture
async def editor(demo):
    demo.headers = demo.auth(await demo.token("articles.*,authors.read"))
    return demo


async def test_a_list_and_a_record_carry_a_strong_etag_and_vary_on_the_token(editor):
    for path in ("articles", "articles/1", "articles?sort=-views&limit=2"):
        response = await editor.client.get(f"{API}/{path}", headers=editor.headers)
        assert response.status_code == 200
        assert response.headers["etag"].startswith('"') and not response.headers["etag"].startswith("W/")
        assert response.headers["vary"] == "Authorization, X-API-Key"
        assert response.headers["cache-control"] == "private, no-cache"


async def test_the_same_request_gets_the_same_tag_and_a_change_gets_another(editor):
    first = await editor.client.get(f"{API}/articles/1", headers=editor.headers)
    again = await editor.client.get(f"{API}/articles/1", headers=editor.headers)
    other = await editor.client.get(f"{API}/articles/1?fields=title", headers=editor.headers)
    assert first.headers["etag"] == again.headers["etag"] != other.headers["etag"]
    listed = await editor.client.get(f"{API}/articles", headers=editor.headers)
    await editor.client.patch(f"{API}/articles/1", json={"views": 99}, headers=editor.headers)
    changed = await editor.client.get(f"{API}/articles/1", headers=editor.headers)
    relisted = await editor.client.get(f"{API}/articles", headers=editor.headers)
    assert changed.headers["etag"] != first.headers["etag"]
    assert relisted.headers["etag"] != listed.headers["etag"]


async def test_if_none_match_with_the_current_tag_answers_304_without_a_body(editor):
    first = await editor.client.get(f"{API}/articles", headers=editor.headers)
    tag = first.headers["etag"]
    for sent in (tag, f"W/{tag}", f'"other", {tag}', "*"):
        headers = {**editor.headers, "If-None-Match": sent}
        response = await editor.client.get(f"{API}/articles", headers=headers)
        assert response.status_code == 304, sent
        assert response.content == b""
        assert response.headers["etag"] == tag
        assert response.headers["cache-control"] == "private, no-cache"
        assert response.headers["vary"] == "Authorization, X-API-Key"
        assert "x-ratelimit-remaining" in response.headers


async def test_if_none_match_with_an_old_tag_answers_the_whole_record(editor):
    headers = {**editor.headers, "If-None-Match": '"not-the-tag"'}
    response = await editor.client.get(f"{API}/articles/1", headers=headers)
    assert response.status_code == 200 and response.json()["data"]["id"] == 1
    head = await editor.client.head(f"{API}/articles/1", headers={**editor.headers, "If-None-Match": "*"})
    assert head.status_code == 304


async def test_writes_answer_with_the_tag_the_plain_show_gives(editor):
    created = await editor.client.post(f"{API}/articles", json={"title": "Tagged"}, headers=editor.headers)
    shown = await editor.client.get(created.headers["location"], headers=editor.headers)
    assert created.status_code == 201 and created.headers["etag"] == shown.headers["etag"]
    address = created.headers["location"]
    patched = await editor.client.patch(address, json={"views": 3}, headers=editor.headers)
    shown = await editor.client.get(address, headers=editor.headers)
    assert patched.headers["etag"] == shown.headers["etag"]


async def test_if_match_with_the_current_tag_lets_the_update_through(editor):
    tag = (await editor.client.get(f"{API}/articles/1", headers=editor.headers)).headers["etag"]
    headers = {**editor.headers, "If-Match": tag}
    response = await editor.client.patch(f"{API}/articles/1", json={"views": 5}, headers=headers)
    assert response.status_code == 200 and response.json()["data"]["views"] == 5
    star = await editor.client.patch(
        f"{API}/articles/1", json={"views": 6}, headers={**editor.headers, "If-Match": "*"}
    )
    assert star.status_code == 200


async def test_if_match_with_an_old_or_weak_tag_is_refused_with_412_and_nothing_changes(editor):
    tag = (await editor.client.get(f"{API}/articles/1", headers=editor.headers)).headers["etag"]
    for sent in ('"stale"', f"W/{tag}"):
        headers = {**editor.headers, "If-Match": sent}
        response = await editor.client.patch(f"{API}/articles/1", json={"views": 7}, headers=headers)
        assert response.status_code == 412
        assert response.json()["error"] == "precondition_failed"
        deleted = await editor.client.delete(f"{API}/articles/1", headers=headers)
        assert deleted.status_code == 412
    after = await editor.client.get(f"{API}/articles/1", headers=editor.headers)
    assert after.status_code == 200 and after.headers["etag"] == tag


async def test_if_match_with_an_unquoted_tag_is_a_412_that_says_the_quotes_are_missing(editor):
    tag = (await editor.client.get(f"{API}/articles/1", headers=editor.headers)).headers["etag"]
    bare = tag.strip('"')  # the current tag without its quotes: a client that stripped them
    for method in ("patch", "delete"):
        headers = {**editor.headers, "If-Match": bare}
        sent = {"json": {"views": 7}} if method == "patch" else {}
        response = await getattr(editor.client, method)(f"{API}/articles/1", headers=headers, **sent)
        assert response.status_code == 412
        body = response.json()
        assert body["error"] == "precondition_failed"
        assert "not a quoted entity-tag" in body["message"] and bare in body["message"]
        assert "has changed" not in body["message"]
    stale = {**editor.headers, "If-Match": '"stale"'}
    response = await editor.client.patch(f"{API}/articles/1", json={"views": 7}, headers=stale)
    assert "has changed" in response.json()["message"]  # a real tag that is not current: as before
    after = await editor.client.get(f"{API}/articles/1", headers=editor.headers)
    assert after.headers["etag"] == tag


async def test_create_and_update_answers_vary_on_the_token_as_reads_do(editor):
    created = await editor.client.post(f"{API}/articles", json={"title": "Varied"}, headers=editor.headers)
    assert created.status_code == 201
    address = created.headers["location"]
    patched = await editor.client.patch(address, json={"views": 1}, headers=editor.headers)
    read = await editor.client.get(address, headers=editor.headers)
    for response in (created, patched):
        assert response.headers["vary"] == read.headers["vary"] == "Authorization, X-API-Key"
    key = {**editor.headers, "Idempotency-Key": "vary-1"}
    once = await editor.client.post(f"{API}/articles", json={"title": "Kept"}, headers=key)
    again = await editor.client.post(f"{API}/articles", json={"title": "Kept"}, headers=key)
    assert again.headers["idempotent-replayed"] == "true"
    assert once.headers["vary"] == again.headers["vary"] == "Authorization, X-API-Key"


async def test_if_match_on_a_missing_record_answers_404(editor):
    headers = {**editor.headers, "If-Match": "*"}
    response = await editor.client.delete(f"{API}/articles/999", headers=headers)
    assert response.status_code == 404


async def test_a_delete_with_the_current_tag_removes_the_record(editor):
    body = {"title": "Short-lived"}
    created = await editor.client.post(f"{API}/articles", json=body, headers=editor.headers)
    address, tag = created.headers["location"], created.headers["etag"]
    deleted = await editor.client.delete(address, headers={**editor.headers, "If-Match": tag})
    assert deleted.status_code == 204
    assert (await editor.client.get(address, headers=editor.headers)).status_code == 404


async def test_two_updates_holding_the_same_tag_get_one_200_and_one_412(editor, host_factory):
    # Two instances on one database, as two servers would be.
    other = await host_factory(editor.database, demo_registry())
    tag = (await editor.client.get(f"{API}/articles/1", headers=editor.headers)).headers["etag"]
    headers = {**editor.headers, "If-Match": tag}
    answers = await asyncio.gather(
        editor.client.patch(f"{API}/articles/1", json={"title": "From the first"}, headers=headers),
        other.client.patch(f"{API}/articles/1", json={"title": "From the second"}, headers=headers),
    )
    assert sorted(answer.status_code for answer in answers) == [200, 412]
    winner = next(answer for answer in answers if answer.status_code == 200)
    shown = await editor.client.get(f"{API}/articles/1", headers=editor.headers)
    assert shown.json()["data"]["title"] == winner.json()["data"]["title"]
