"""The lifespan of a test host that a real server runs: connect the database and start the API, then
shut the API down and disconnect, as a site's own lifespan does (README, "Mount it in your app")."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from databases import Database

from pb_headless import HeadlessAPI


def api_lifespan(database: Database, api: HeadlessAPI) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await database.connect()
        await api.startup()
        yield
        await api.shutdown()
        await database.disconnect()

    return lifespan
