"""The example site's `serve` brings library tables of an older release up before it serves."""

from __future__ import annotations

from pathlib import Path

import httpx
import sqlalchemy as sa
from databases import Database

from examples.site.app import create_site
from examples.site.commands import init
from pb_headless.migrations import runner
from tests.migrations.support import versions
from tests.site.harness import site_config


async def test_the_example_site_started_on_0_1_0_tables_migrates_them_and_serves(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'site.db'}"
    config = site_config(url)
    await init(config)
    database = Database(url)
    await database.connect()
    try:  # the library's tables as 0.1.0 left them: no change log, no version table
        await database.execute(sa.text("DROP TABLE pb_changes"))
        await database.execute(sa.text("DROP TABLE pb_alembic_version"))
    finally:
        await database.disconnect()

    site = create_site(config)
    async with site.running():
        transport = httpx.ASGITransport(app=site.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            health = await client.get("/api/pb/v1/health")
        assert health.status_code == 200 and health.json()["database"] == "ok"
        assert await versions(site.database) == [runner.head()]
