"""Issue 4: 200 concurrent creates and updates from 16 clients against a real server; afterwards the
table holds exactly what the server acknowledged."""

import asyncio

import httpx
import pytest
import sqlalchemy as sa

from tests.support.demo import articles, create_demo
from tests.support.server import running_server

pytestmark = pytest.mark.slow

CLIENTS, REQUESTS = 16, 200


async def test_the_table_holds_exactly_what_was_acknowledged(database, host_factory):
    await create_demo(database)
    host = await host_factory(database)
    plain = await host.token("*")
    url = str(database.url)
    env = {"PB_DATABASE_URL": url, "PB_RATE_LIMIT": "100000"}
    with running_server("tests.support.demo_app:app", env) as base:
        created, updated = await _hammer(base, plain)
    rows = {row[0]: row[1] for row in await database.fetch_all(sa.select(articles.c.id, articles.c.title))}
    assert len(created) + sum(len(titles) for titles in updated.values()) == REQUESTS
    assert set(rows) == set(range(1, 8)) | set(created)  # the seeded rows and every acknowledged create
    for record_id, title in created.items():
        # concurrent updates of one row commit in some order: the row ends as one of them
        assert rows[record_id] in (updated.get(record_id) or [title])


async def _hammer(base: str, plain: str) -> tuple[dict[int, str], dict[int, list[str]]]:
    """Half creates, half updates of rows created earlier; returns what the server acknowledged."""
    headers = {"Authorization": f"Bearer {plain}"}
    created: dict[int, str] = {}
    updated: dict[int, list[str]] = {}
    queue: asyncio.Queue[int] = asyncio.Queue()
    for number in range(REQUESTS):
        queue.put_nowait(number)

    async def client() -> None:
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http:
            while not queue.empty():
                number = queue.get_nowait()
                if number % 2 == 0 or not created:
                    title = f"created {number}"
                    response = await http.post("/api/pb/v1/objects/articles", json={"title": title})
                    assert response.status_code == 201, response.text
                    created[response.json()["data"]["id"]] = title
                else:
                    target = sorted(created)[number % len(created)]
                    title = f"updated {number}"
                    response = await http.patch(
                        f"/api/pb/v1/objects/articles/{target}", json={"title": title}
                    )
                    assert response.status_code == 200, response.text
                    updated.setdefault(target, []).append(title)

    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    return created, updated
