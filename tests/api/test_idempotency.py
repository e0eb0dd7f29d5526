"""docs/caching.md "Retrying a POST safely": Idempotency-Key on POST, kept per token and key."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
import sqlalchemy as sa

from pb_headless.idempotency import store
from pb_headless.tables import idempotency
from tests.support.demo import articles, demo_registry
from tests.support.refusals import updates_refused

API = "/api/pb/v1/objects/articles"


@pytest.fixture
async def writer(demo):
    info, plain = await demo.tokens.create("writer", "articles.*")
    demo.owner = info.token_hash
    demo.headers = demo.auth(plain)
    return demo


async def titled(host, title: str) -> int:
    query = sa.select(sa.func.count()).select_from(articles).where(articles.c.title == title)
    return int(await host.database.fetch_val(query))


async def post(host, body: dict, key: str | bytes | None, path: str = API):
    headers = dict(host.headers) if key is None else {**host.headers, "Idempotency-Key": key}
    return await host.client.post(path, json=body, headers=headers)


async def test_a_repeated_post_gets_the_first_answer_again_and_writes_nothing(writer):
    first = await post(writer, {"title": "Once only"}, "order-1")
    again = await post(writer, {"title": "Once only"}, "order-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    for header in ("location", "etag"):
        assert again.headers[header] == first.headers[header]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert await titled(writer, "Once only") == 1


async def test_the_same_key_with_another_body_or_path_is_refused(writer):
    await post(writer, {"title": "First use"}, "order-2")
    other_body = await post(writer, {"title": "Second use"}, "order-2")
    other_path = await post(writer, {"title": "First use"}, "order-2", path=f"{API}?x=1")
    for answer in (other_body, other_path):
        assert answer.status_code == 422 and answer.json()["error"] == "idempotency_key_reused"
    assert await titled(writer, "Second use") == 0


@pytest.mark.parametrize("key", ["", "with space", "x" * 256, "na\xefve".encode("latin-1"), "tab\there"])
async def test_a_key_that_is_not_1_to_255_visible_ascii_characters_is_a_400(writer, key):
    answer = await post(writer, {"title": "Bad key"}, key)
    assert answer.status_code == 400 and answer.json()["error"] == "bad_request"
    assert await titled(writer, "Bad key") == 0


async def test_a_client_error_is_kept_and_answered_again(writer):
    first = await post(writer, {"title": ""}, "order-3")
    again = await post(writer, {"title": ""}, "order-3")
    assert first.status_code == again.status_code == 422
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"


async def test_keys_belong_to_their_token(writer):
    await post(writer, {"title": "Per token"}, "order-4")
    writer.headers = writer.auth(await writer.token("articles.*"))
    other = await post(writer, {"title": "Per token"}, "order-4")
    assert other.status_code == 201 and "idempotent-replayed" not in other.headers
    assert await titled(writer, "Per token") == 2


async def test_the_key_is_ignored_on_other_methods(writer):
    headers = {**writer.headers, "Idempotency-Key": "order-5"}
    for views in (1, 2):
        answer = await writer.client.patch(f"{API}/1", json={"views": views}, headers=headers)
        assert answer.status_code == 200 and answer.json()["data"]["views"] == views
    assert await writer.database.fetch_val(sa.select(sa.func.count()).select_from(idempotency)) == 0


async def test_a_repeat_while_the_first_runs_is_a_409_and_a_released_claim_runs_again(writer):
    # The first request's claim, as it stands while that request runs (its answer not yet kept).
    first = await post(writer, {"title": "Still running"}, "order-6")
    assert first.status_code == 201
    claimed = idempotency.c.idempotency_key == "order-6"
    await writer.database.execute(idempotency.update().values(status=None, answer=None).where(claimed))
    running = await post(writer, {"title": "Still running"}, "order-6")
    assert running.status_code == 409 and running.json()["error"] == "idempotency_in_progress"
    assert running.headers["retry-after"] == "1"
    # A 5xx releases the claim, as here: the client's retry then runs.
    await store.release(writer.database, writer.owner, "order-6")
    retried = await post(writer, {"title": "Still running"}, "order-6")
    assert retried.status_code == 201 and "idempotent-replayed" not in retried.headers


async def test_expired_answers_are_pruned_and_their_key_runs_afresh(writer):
    await post(writer, {"title": "Old"}, "order-7")
    past = store.now() - timedelta(hours=25)
    await writer.database.execute(idempotency.update().values(expires_at=past))
    again = await post(writer, {"title": "Old"}, "order-7")
    assert again.status_code == 201 and "idempotent-replayed" not in again.headers
    await post(writer, {"title": "Another"}, "order-8")
    await writer.database.execute(
        idempotency.update().values(expires_at=past).where(idempotency.c.idempotency_key == "order-7")
    )
    await post(writer, {"title": "Yet another"}, "order-9")  # keeping its answer prunes order-7
    keys = {row[0] for row in await writer.database.fetch_all(sa.select(idempotency.c.idempotency_key))}
    assert keys == {"order-8", "order-9"}


async def test_twenty_parallel_posts_with_one_key_over_two_instances_create_one_row(writer, host_factory):
    other = await host_factory(writer.database, demo_registry())
    other.headers = writer.headers
    answers = await asyncio.gather(
        *(post(host, {"title": "Raced"}, "order-10") for host in [writer, other] * 10)
    )
    assert await titled(writer, "Raced") == 1
    assert {answer.status_code for answer in answers} <= {201, 409}
    created = [answer for answer in answers if answer.status_code == 201]
    assert len({answer.json()["data"]["id"] for answer in created}) == 1
    assert sum("idempotent-replayed" not in answer.headers for answer in created) == 1


async def kept_row(host, key: str):
    query = sa.select(idempotency.c.status, idempotency.c.answer).where(
        idempotency.c.token_hash == host.owner, idempotency.c.idempotency_key == key
    )
    return await host.database.fetch_one(query)


async def test_a_created_record_and_its_kept_answer_commit_together(writer):
    answer = await post(writer, {"title": "Kept with its row"}, "together-1")
    assert answer.status_code == 201
    assert await titled(writer, "Kept with its row") == 1
    kept = await kept_row(writer, "together-1")
    assert kept is not None and kept[0] == 201 and answer.headers["location"] in kept[1]


async def test_a_failure_before_the_commit_leaves_neither_the_record_nor_a_kept_answer(writer, caplog):
    # A failure after the insert and before the commit: keeping the answer is refused by the database.
    async with updates_refused(writer.database, "pb_idempotency"):
        failed = await post(writer, {"title": "Never half written"}, "together-2")
    assert failed.status_code == 500
    assert await titled(writer, "Never half written") == 0
    assert await kept_row(writer, "together-2") is None  # released: the retry runs
    retried = await post(writer, {"title": "Never half written"}, "together-2")
    again = await post(writer, {"title": "Never half written"}, "together-2")
    assert retried.status_code == again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert await titled(writer, "Never half written") == 1


async def test_two_idempotency_key_headers_are_a_400_and_nothing_is_written(writer):
    headers = [*writer.headers.items(), ("Idempotency-Key", "first"), ("Idempotency-Key", "second")]
    for _ in range(2):
        answer = await writer.client.post(API, json={"title": "Two keys"}, headers=headers)
        assert answer.status_code == 400 and answer.json()["error"] == "bad_request"
    assert await titled(writer, "Two keys") == 0
    assert await writer.database.fetch_val(sa.select(sa.func.count()).select_from(idempotency)) == 0


async def test_a_new_token_that_reuses_a_deleted_tokens_id_gets_no_kept_answer(writer):
    first = await post(writer, {"title": "Secret draft"}, "reused-1")
    assert first.status_code == 201 and first.json()["data"]["title"] == "Secret draft"
    old = await writer.tokens.get("writer")
    await writer.tokens.delete("writer")
    assert await writer.database.fetch_val(sa.select(sa.func.count()).select_from(idempotency)) == 0
    info, plain = await writer.tokens.create("write-only", "articles.write")
    if writer.database.url.dialect == "sqlite":
        assert info.id == old.id  # SQLite hands the newest row's id to the next row: the probe's case
    writer.headers = writer.auth(plain)
    again = await post(writer, {"title": "Secret draft"}, "reused-1")
    assert again.status_code == 201 and "idempotent-replayed" not in again.headers
    assert set(again.json()["data"]) == {"id"}  # a write-only token learns the key of what it wrote
    assert await titled(writer, "Secret draft") == 2


async def test_a_reissued_token_drops_what_was_kept_for_its_old_value(writer):
    await post(writer, {"title": "Before reissue"}, "reissued-1")
    other, other_plain = await writer.tokens.create("bystander", "articles.*")
    kept_for_other = await writer.client.post(
        API, json={"title": "Kept"}, headers={**writer.auth(other_plain), "Idempotency-Key": "reissued-1"}
    )
    assert kept_for_other.status_code == 201
    _, plain = await writer.tokens.reissue("writer")
    owners = [row[0] for row in await writer.database.fetch_all(sa.select(idempotency.c.token_hash))]
    assert owners == [other.token_hash]
    writer.headers = writer.auth(plain)
    again = await post(writer, {"title": "Before reissue"}, "reissued-1")
    assert again.status_code == 201 and "idempotent-replayed" not in again.headers
    assert await titled(writer, "Before reissue") == 2
