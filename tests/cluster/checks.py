"""Two instances of examples/site behind nginx, on one PostgreSQL and one Redis, behave as one.

Run by `tests/cluster/run` (its own CI step), not by the main suite: the file name is not `test_*`,
and the cluster takes a minute to set up. It starts `scripts/cluster` in a folder of its own and
stops it at the end. Requests go through nginx (as a site's clients would) or straight to one
instance, when a check must know which one answers. docs/deployment.md describes the deployment.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from databases import Database
from standardwebhooks import Webhook

from examples.site.definitions import create_content_table
from pb_headless.constructor import ApiTab, ConstructorField
from pb_headless.constructor.store import ApiTabStore
from pb_headless.settings import SettingsStore
from pb_headless.tables import webhook_tables
from tests.cluster.harness import API, Cluster, client, is_alive, new_client, wait_for_exit
from tests.cluster.load import Load, create_articles
from tests.webhooks.receiver import running_receiver

HOOKED_ROWS = 120  # articles created for the webhook check (plus an update of half, a delete of a quarter)
HOOK_CLIENTS = 6
DELIVERY_BOUND = 60.0  # seconds within which every webhook must have been delivered
OUTAGE = 3.0  # seconds PostgreSQL stays down
RECOVERY_BOUND = 10.0  # seconds within which the API must answer again once it is back


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    folder = Path(os.environ.get("PB_CLUSTER_DIR") or tempfile.mkdtemp(prefix="pb-cluster-"))
    running = Cluster(folder)
    running.script("start")
    try:
        yield running
    finally:
        running.script("stop")


@pytest.fixture(scope="module")
def token(cluster: Cluster) -> str:
    return cluster.token("cluster-checks")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_one_rate_limit_holds_across_both_instances(cluster):
    who = new_client()
    async with client() as http:
        answers = []
        for number in range(124):  # taking turns: instance 1, instance 2, ...
            url = cluster.instances[number % 2] + API + "/health"
            answers.append(await http.get(url, headers=who))
        through_nginx = await http.get(cluster.proxy + API + "/health", headers=who)
    assert [a.status_code for a in answers] == [200] * 120 + [429] * 4
    assert [int(a.headers["X-RateLimit-Remaining"]) for a in answers[:120]] == list(range(119, -1, -1))
    assert through_nginx.status_code == 429 and int(through_nginx.headers["Retry-After"]) >= 1


async def test_a_reissued_or_disabled_token_is_refused_by_both_instances_at_once(cluster):
    old = cluster.token("cluster-reissue")
    async with client() as http:
        assert await statuses(http, cluster.instances, "/me", bearer(old)) == [200, 200]
        new = cluster.console("token", "reissue", "cluster-reissue").strip().splitlines()[-1]
        assert await statuses(http, cluster.instances, "/me", bearer(old)) == [401, 401]
        assert await statuses(http, cluster.instances, "/me", bearer(new)) == [200, 200]
        cluster.console("token", "disable", "cluster-reissue")
        assert await statuses(http, cluster.instances, "/me", bearer(new)) == [401, 401]


async def test_a_constructor_table_published_or_unpublished_is_served_by_both_at_once(cluster, token):
    """Every request reads the shared version, so the very next request on either instance serves
    the change; the time from the change to both answers is printed (the bound is one second)."""
    async with Database(cluster.database_url) as database:
        table = await create_content_table(
            database,
            "Cluster events",
            [ConstructorField(name="name", type="string", required=True, length=100)],
        )
        tabs = ApiTabStore(database)
        async with client() as http:
            path = "/objects/cluster-events"
            assert await statuses(http, cluster.instances, path, bearer(token)) == [404, 404]
            started = time.monotonic()
            await tabs.save(table.name, ApiTab(enabled=True, fields=("name",), url_name="cluster-events"))
            assert await statuses(http, cluster.instances, path, bearer(token)) == [200, 200]
            published = time.monotonic() - started
            started = time.monotonic()
            await tabs.save(table.name, ApiTab(enabled=False, fields=("name",), url_name="cluster-events"))
            assert await statuses(http, cluster.instances, path, bearer(token)) == [404, 404]
            unpublished = time.monotonic() - started
    print(
        f"\npublished → served by both in {published * 1000:.0f} ms; "
        f"unpublished → refused by both in {unpublished * 1000:.0f} ms"
    )
    assert published < 1 and unpublished < 1


async def test_a_cors_setting_changed_is_served_by_both_at_once(cluster, token):
    """The same store the administration's CORS page writes to; the time runs from the write."""
    origin = {"Origin": "https://app.example.com"}
    async with Database(cluster.database_url) as database, client() as http:
        settings = SettingsStore(database)
        started = time.monotonic()
        await settings.set("service_cors_origins", "https://app.example.com")
        allowed = await cors_answers(http, cluster, origin, token)
        elapsed_on = time.monotonic() - started
        started = time.monotonic()
        await settings.set("service_cors_origins", "https://other.example.com")
        refused = await cors_answers(http, cluster, origin, token)
        elapsed_off = time.monotonic() - started
    assert allowed == ["https://app.example.com"] * 2
    assert refused == [None, None]
    print(
        f"\nCORS origin added → served by both in {elapsed_on * 1000:.0f} ms; "
        f"removed → by both in {elapsed_off * 1000:.0f} ms"
    )
    assert elapsed_on < 1 and elapsed_off < 1


async def test_2000_creates_from_16_clients_over_both_instances_leave_exactly_the_acknowledged_rows(
    cluster, token
):
    started = time.monotonic()
    created = await create_articles(cluster.proxy, token, clients=16, total=2000, label="bulk")
    print(f"\n2,000 creates from 16 clients through nginx in {time.monotonic() - started:.1f} s")
    acknowledged = {(row_id, title) for status, row_id, title in created if status == 201}
    async with Database(cluster.database_url) as database:
        rows = await database.fetch_all("SELECT id, title FROM articles WHERE title LIKE 'cluster-bulk-%'")
    assert sorted(status for status, _, _ in created) == [201] * 2000
    assert {(row["id"], row["title"]) for row in rows} == acknowledged
    assert len(rows) == 2000


async def test_webhooks_from_writes_on_both_instances_are_each_delivered_and_duplicates_counted(
    cluster, token
):
    """A receiver on loopback (allowed by `service_webhooks_allow_private`, docs/webhooks.md) gets an
    event for every create, update and delete made through either instance; both instances run the
    delivery worker. Every change's `webhook-id` must arrive, signed; a `webhook-id` that arrives more
    than once is a duplicate, counted and printed (at least once allows them; none are expected).
    Meanwhile a change stream opened through nginx sees each row's latest state, no entry twice."""
    cluster.console("settings", "set", "service_webhooks_allow_private", "yes")
    streamed: list[dict] = []
    opened = asyncio.Event()
    async with running_receiver() as receiver:
        secret = (
            cluster.console(
                "webhooks", "create", "--name", "cluster", "--url", receiver.url, "--objects", "articles"
            )
            .strip()
            .splitlines()[-1]
        )
        watcher = asyncio.create_task(follow_stream(cluster, token, streamed, opened))
        try:
            await asyncio.wait_for(opened.wait(), 10)
            started = time.monotonic()
            expected = await write_through_both(cluster, token, rows=HOOKED_ROWS)
            messages = await until_delivered(cluster, receiver, bound=DELIVERY_BOUND)
            delivered_in = time.monotonic() - started
            await until_streamed(streamed, final_states(expected), bound=10)
        finally:
            watcher.cancel()
            cluster.console("webhooks", "delete", "cluster")
            cluster.console("settings", "unset", "service_webhooks_allow_private")

    verifier = Webhook(secret)
    arrived: dict[str, int] = {}
    events: dict[str, tuple[str, int]] = {}
    for post in receiver.received:
        verifier.verify(post.body, post.headers)  # raises on a bad signature
        message = post.headers["webhook-id"]
        arrived[message] = arrived.get(message, 0) + 1
        events[message] = (post.event["type"], post.event["data"]["id"])
    duplicates = sum(count - 1 for count in arrived.values())
    print(
        f"\nwebhooks: {len(expected)} changes through both instances → {len(receiver.received)} POSTs, "
        f"{len(arrived)} distinct webhook-ids, {duplicates} duplicate(s); all delivered "
        f"{delivered_in:.1f} s after the first write"
    )
    assert set(arrived) == set(messages)  # each change's webhook-id arrived (and nothing else)
    assert sorted(events.values()) == sorted(expected)  # one message per change, the right change
    # The stream, through nginx, had each row's latest state, and no entry twice.
    print(f"stream through nginx: {len(streamed)} events for {len(final_states(expected))} rows")
    assert len({entry["cursor"] for entry in streamed}) == len(streamed)
    assert {entry["id"]: entry["op"] for entry in streamed} == final_states(expected)


async def test_postgresql_restarted_under_load_gives_503_then_recovers_without_a_restart(cluster, token):
    pids = cluster.instance_pids()
    async with Load(cluster.proxy, token, workers=8) as load:
        await asyncio.sleep(2)
        await asyncio.to_thread(cluster.stop_postgres)  # a fast shutdown: every connection is cut
        down_at = time.monotonic()
        await asyncio.sleep(OUTAGE)
        restarting_at = time.monotonic()
        await asyncio.to_thread(cluster.script, "start")  # starts PostgreSQL again, nothing else
        up_at = time.monotonic()
        await asyncio.sleep(RECOVERY_BOUND + 2)
    outage = [a for a in load.answers if down_at <= a.sent < restarting_at]
    after = [a for a in load.answers if a.sent >= up_at]
    first_success = min((a.done for a in after if a.status == 200), default=float("inf"))
    print(
        f"\n{len(load.answers)} requests; during the outage: {summary(outage)}; after it: {summary(after)}; "
        f"first 200 {first_success - up_at:.2f} s after PostgreSQL was back"
    )
    assert cluster.instance_pids() == pids and all(is_alive(pid) for pid in pids)
    assert outage, "no request was answered while PostgreSQL was down"
    assert {(a.status, a.error) for a in outage} == {(503, "service_unavailable")}
    assert all(a.retry_after for a in outage)
    assert first_success - up_at <= RECOVERY_BOUND
    assert {a.status for a in after if a.sent >= up_at + RECOVERY_BOUND} == {200}


async def test_redis_stopped_limits_per_process_then_shared_again_when_it_returns(cluster):
    one, two = cluster.instances
    await asyncio.to_thread(cluster.stop_redis)
    async with client() as http:
        who = new_client()
        on_one = [(await http.get(one + API + "/health", headers=who)).status_code for _ in range(121)]
        on_two = await http.get(two + API + "/health", headers=who)
        # Each instance counts on its own: 120 on instance 1, and instance 2 has seen one request.
        assert on_one == [200] * 120 + [429]
        assert (on_two.status_code, on_two.headers["X-RateLimit-Remaining"]) == (200, "119")
        await asyncio.to_thread(cluster.script, "start")  # Redis is back (empty: nothing is saved)
        waited = await until_shared(http, cluster)
        who = new_client()
        answers = [
            await http.get(cluster.instances[n % 2] + API + "/health", headers=who) for n in range(122)
        ]
    print(f"\nboth instances shared the limit again {waited:.1f} s after Redis returned")
    assert [a.status_code for a in answers] == [200] * 120 + [429] * 2


async def test_sigterm_lets_requests_in_flight_complete(cluster, token):
    """A create whose body is still arriving when its instance gets SIGTERM is answered and stored;
    meanwhile nginx sends new requests to the other instance, so clients see no error."""
    port = int(cluster.instances[0].rsplit(":", 1)[1])
    pid = cluster.instance_pids()[0]
    body = b'{"title": "cluster-sigterm-in-flight", "category": "news"}'
    async with Load(cluster.proxy, token, workers=6, writes=True) as load:
        await asyncio.sleep(1)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(slow_create(token, body, first=20))
        await writer.drain()
        await asyncio.sleep(0.5)
        os.kill(pid, signal.SIGTERM)
        await asyncio.sleep(1.5)
        still_serving = is_alive(pid)
        writer.write(body[20:])
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=30)
        writer.close()
        exited = await asyncio.to_thread(wait_for_exit, pid, 40)
        await asyncio.sleep(1)
    await asyncio.to_thread(cluster.script, "start")
    async with Database(cluster.database_url) as database:
        stored = await database.fetch_val(
            "SELECT count(*) FROM articles WHERE title = 'cluster-sigterm-in-flight'"
        )
    acknowledged = {a.row_id for a in load.answers if a.status == 201}
    async with Database(cluster.database_url) as database:
        rows = await database.fetch_all("SELECT id FROM articles WHERE title LIKE 'cluster-load-%'")
    print(f"\nduring SIGTERM: {summary(load.answers)}")
    assert still_serving and exited
    assert answer.startswith(b"HTTP/1.1 201 "), answer[:300]
    assert stored == 1
    # The instance drains first (PB_DRAIN_SECONDS, docs/deployment.md "Restarts and outages"): it never
    # closes a connection nginx may still send on, so not even a POST meets a closed socket (a 502).
    statuses = [a.status for a in load.answers]
    assert set(statuses) <= {200, 201}, summary(load.answers)
    assert acknowledged <= {row["id"] for row in rows}


# -- helpers ----------------------------------------------------------------------------------------
async def write_through_both(cluster: Cluster, token: str, rows: int) -> list[tuple[str, int]]:
    """`rows` creates, then an update of every other row and a delete of every fourth, each write
    sent to the instance the previous one did not go to; the events they must cause, as
    (type, id)."""
    expected: list[tuple[str, int]] = []
    turn = itertools.count()

    def base() -> str:
        return cluster.instances[next(turn) % 2] + API + "/objects/articles"

    async def one_client(number: int) -> None:
        headers = {**bearer(token), **new_client()}
        async with client() as http:
            for index in range(number, rows, HOOK_CLIENTS):
                created = await http.post(
                    base(), headers=headers, json={"title": f"cluster-hook-{index}", "category": "news"}
                )
                assert created.status_code == 201, created.text
                row_id = created.json()["data"]["id"]
                expected.append(("articles.create", row_id))
                if index % 2 == 0:
                    changed = await http.patch(
                        f"{base()}/{row_id}", headers=headers, json={"title": "changed"}
                    )
                    assert changed.status_code == 200, changed.text
                    expected.append(("articles.update", row_id))
                if index % 4 == 0:
                    deleted = await http.delete(f"{base()}/{row_id}", headers=headers)
                    assert deleted.status_code == 204, deleted.text
                    expected.append(("articles.delete", row_id))
                headers.update(new_client())  # a new client every few writes: the rate limit stays out of it

    await asyncio.gather(*(one_client(number) for number in range(HOOK_CLIENTS)))
    return expected


def final_states(expected: list[tuple[str, int]]) -> dict[int, str]:
    """Each written row's last entry on the stream: `delete` for the deleted ones, `upsert` otherwise."""
    states: dict[int, str] = {}
    for kind, row_id in expected:
        states[row_id] = "delete" if kind == "articles.delete" else states.get(row_id, "upsert")
    return states


async def follow_stream(cluster: Cluster, token: str, streamed: list[dict], opened: asyncio.Event) -> None:
    """The articles' change stream through nginx: every entry it sends, until cancelled."""
    headers = {**bearer(token), **new_client()}
    url = cluster.proxy + API + "/changes/articles/stream"
    async with client() as http, http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line == ": stream open":
                opened.set()
            elif line.startswith("data: "):
                streamed.append(json.loads(line.removeprefix("data: ")))


async def until_streamed(streamed: list[dict], states: dict[int, str], bound: float) -> None:
    deadline = time.monotonic() + bound
    while {entry["id"]: entry["op"] for entry in streamed} != states:
        if time.monotonic() > deadline:
            got = {entry["id"]: entry["op"] for entry in streamed}
            wrong = sum(1 for key, op in states.items() if got.get(key) != op)
            raise AssertionError(f"after {bound:.0f} s the stream had {wrong} of {len(states)} rows wrong")
        await asyncio.sleep(0.2)


async def until_delivered(cluster: Cluster, receiver, bound: float) -> list[str]:
    """The `webhook-id`s of the endpoint's deliveries once none is pending and each has reached the
    receiver; fails when that takes longer than `bound` seconds."""
    deliveries = webhook_tables.deliveries
    query = (
        sa.select(deliveries.c.message_id, deliveries.c.status)
        .join(webhook_tables.webhooks, webhook_tables.webhooks.c.id == deliveries.c.webhook_id)
        .where(webhook_tables.webhooks.c.name == "cluster")
    )
    deadline = time.monotonic() + bound
    async with Database(cluster.database_url) as database:
        while True:
            rows = await database.fetch_all(query)
            statuses_ = {row._mapping["status"] for row in rows}
            received = {post.headers["webhook-id"] for post in receiver.received}
            messages = [row._mapping["message_id"] for row in rows]
            if rows and statuses_ == {"success"} and set(messages) <= received:
                return messages
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"after {bound:.0f} s: {len(rows)} deliveries, statuses {statuses_}, "
                    f"{len(set(messages) - received)} not received"
                )
            await asyncio.sleep(0.2)


async def statuses(
    http: httpx.AsyncClient, bases: list[str], path: str, headers: dict[str, str]
) -> list[int]:
    return [
        (await http.get(base + API + path, headers={**headers, **new_client()})).status_code for base in bases
    ]


async def cors_answers(http, cluster, origin, token) -> list[str | None]:
    answers = [
        await http.get(base + API + "/objects/articles", headers={**origin, **bearer(token), **new_client()})
        for base in cluster.instances
    ]
    assert [a.status_code for a in answers] == [200, 200]
    return [a.headers.get("Access-Control-Allow-Origin") for a in answers]


async def until_shared(http: httpx.AsyncClient, cluster: Cluster, bound: float = 20) -> float:
    """Seconds until both instances count one client together again (each retries Redis on its own)."""
    started = time.monotonic()
    while time.monotonic() - started < bound:
        who = new_client()
        first = await http.get(cluster.instances[0] + API + "/health", headers=who)
        second = await http.get(cluster.instances[1] + API + "/health", headers=who)
        remaining = [answer.headers["X-RateLimit-Remaining"] for answer in (first, second)]
        if remaining == ["119", "118"]:
            return time.monotonic() - started
        await asyncio.sleep(0.5)
    raise AssertionError(f"the instances did not share the rate limit again within {bound:.0f} s")


def slow_create(token: str, body: bytes, first: int) -> bytes:
    """The head of a POST and the first `first` bytes of its body; the rest is sent later."""
    head = (
        f"POST {API}/objects/articles HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
        f"X-Forwarded-For: {new_client()['X-Forwarded-For']}\r\n\r\n"
    )
    return head.encode() + body[:first]


def summary(answers) -> str:
    counts: dict[str, int] = {}
    for answer in answers:
        key = f"{answer.status}" + (f" {answer.error}" if answer.error else "")
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{count} × {key}" for key, count in sorted(counts.items())) or "none"
