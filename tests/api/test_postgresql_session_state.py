"""PostgreSQL: the API leaves nothing on a session that outlives its request (docs/deployment.md).

That is what lets a host give asyncpg's pool a `reset` that does nothing, and save the round trip of
the default reset on every request: a search's planning mode, the session lock of the change log's
function, a write's locks, all are undone by the library itself before the connection goes back.
"""

from __future__ import annotations

import asyncio

from databases import Database

from tests.support.databases import open_database
from tests.support.demo import create_demo, demo_registry
from tests.support.host import build_host


async def keep_session(connection) -> None:
    """The `reset` docs/deployment.md shows: the connection goes back to the pool as it is."""


async def test_a_connection_goes_back_to_the_pool_with_no_session_state(tmp_path_factory):
    async with open_database("postgresql", tmp_path_factory.mktemp("db")) as setup:
        await create_demo(setup)
        url = str(setup.url)
    # One connection: every request and every background read of the API runs on it in turn.
    database = Database(url, reset=keep_session, min_size=1, max_size=1)
    await database.connect()
    try:
        host = await build_host(database, demo_registry())
        auth = host.auth(await host.token("articles.read articles.write authors.read"))
        client = host.client
        for query in ("search=lorem", "search=guide", "filter[title][like]=fil", "sort=-price&limit=3"):
            assert (await client.get(f"/api/pb/v1/objects/articles?{query}", headers=auth)).status_code == 200
        created = await client.post("/api/pb/v1/objects/articles", headers=auth, json={"title": "Session"})
        assert created.status_code == 201, created.text
        new = created.json()["data"]["id"]
        address = f"/api/pb/v1/objects/articles/{new}"
        changed = await client.patch(address, headers=auth, json={"title": "Kept"})
        assert changed.status_code == 200
        assert (await client.delete(address, headers=auth)).status_code == 204
        assert (await client.get("/api/pb/v1/changes/articles", headers=auth)).status_code == 200
        await asyncio.sleep(0.2)  # background reads (a kept count) give the connection back too

        async with database.connection() as connection:
            raw = connection.raw_connection
            assert not raw.is_in_transaction()
            assert await raw.fetchval("SELECT current_setting('plan_cache_mode')") == "auto"
            # A search's time budget (database/budget.py) is the server's default again.
            assert await raw.fetchval("SELECT current_setting('statement_timeout')") == "0"
            held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
            assert await raw.fetchval(held) == 0
            assert await raw.fetchval("SELECT count(*) FROM pg_listening_channels()") == 0
            named = "SELECT count(*) FROM pg_cursors WHERE name <> ''"  # this statement is an unnamed one
            assert await raw.fetchval(named) == 0
        await host.client.aclose()
    finally:
        await database.disconnect()
