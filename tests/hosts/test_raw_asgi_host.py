"""The bare ASGI host: its lifespan, its hand-written routing, and the API it hands paths to."""

import asyncio

from examples.raw_asgi_host.app import create_app
from pb_headless import TokenStore
from tests.hosts.lifespan import serving


async def test_the_custom_route_renders_a_validation_error_from_the_route(sqlite_database):
    async with serving(create_app(str(sqlite_database.url))) as client:
        _, plain = await TokenStore(sqlite_database).create("cook", "anything.read")
        quick = await client.get("/api/pb/v1/recipes/quick?minutes=90", headers={"X-API-Key": plain})
        assert [recipe["title"] for recipe in quick.json()["data"]] == ["Syrniki", "Borscht"]
        invalid = await client.get("/api/pb/v1/recipes/quick?minutes=abc", headers={"X-API-Key": plain})
        assert invalid.status_code == 422
        assert invalid.json()["details"] == {
            "minutes": ["must be a whole number of minutes between 1 and 1440"]
        }


async def test_the_api_at_its_bare_prefix_answers_as_the_api(sqlite_database):
    async with serving(create_app(str(sqlite_database.url))) as client:
        bare = await client.get("/api/pb/v1")
        assert bare.status_code == 401  # under the API, no token yet: the API answers, not the host
        assert "x-ratelimit-limit" in bare.headers


async def test_a_host_that_cannot_reach_its_database_fails_its_start():
    app = create_app("postgresql://postgres@127.0.0.1:1/nowhere")  # nothing listens on port 1
    inbox, outbox = asyncio.Queue(), asyncio.Queue()
    task = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    answer = await asyncio.wait_for(outbox.get(), timeout=30)
    await task
    assert answer["type"] == "lifespan.startup.failed"
    assert answer["message"]
