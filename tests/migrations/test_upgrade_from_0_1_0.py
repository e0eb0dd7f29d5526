"""An upgrade from the real 0.1.0 loses nothing: a database that release's own code filled (tokens,
settings, a constructor publication, content rows) is migrated by this code on each database, and the
API answers through HTTP as 0.1.0 answered.

The 0.1.0 code is the package of commit 673b4f9 (the release as it landed), taken from this repository
with `git archive` into .venv-0.1.0 (git-ignored, kept for reruns) and run by the test Python with
that folder first on its path; release_0_1_0/build.py is what it runs.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from pb_headless import ApiRegistry, SettingsStore, install
from pb_headless.constructor import ApiTab, ApiTabStore, ConstructorField, ConstructorSource, ConstructorTable
from pb_headless.migrations import runner
from tests.migrations.support import schema_differences, tables, versions

ROOT = Path(__file__).resolve().parents[2]
RELEASE = "673b4f9"  # 0.1.0
OLD_CODE = ROOT / ".venv-0.1.0"
BUILD = Path(__file__).parent / "release_0_1_0" / "build.py"
ARTICLES: dict[str, Any] = {
    "name": "articles",
    "title": "Articles",
    "fields": [
        {"name": "title", "type": "string", "required": True, "searchable": True},
        {"name": "body", "type": "text"},
        {"name": "score", "type": "integer"},
    ],
    "rows": [
        {"id": 1, "title": "First", "body": "one", "score": 3, "published": True},
        {"id": 2, "title": "Second", "body": "two", "score": 5, "published": True},
        {"id": 3, "title": "Draft", "body": "three", "score": 1, "published": False},
    ],
    "tab": {"enabled": True, "fields": ["title", "body", "score"], "operations": ["list", "show"]},
}
USERS = {"7": {"id": "7", "username": "ann"}}


def old_code() -> Path:
    """The package of 0.1.0, extracted once."""
    marker = OLD_CODE / f".from-{RELEASE}"
    if not marker.exists():
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", RELEASE, "pb_headless"],
            capture_output=True, check=True, timeout=120,
        )  # fmt: skip
        OLD_CODE.mkdir(exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(OLD_CODE, filter="data")
        marker.touch()
    return OLD_CODE


def build_with_0_1_0(url: str) -> dict[str, Any]:
    folder = old_code()
    environment = {**os.environ, "PYTHONPATH": str(folder)}
    done = subprocess.run(
        [sys.executable, str(BUILD), url, json.dumps(ARTICLES)],
        capture_output=True, text=True, env=environment, cwd=folder, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    built = json.loads(done.stdout)
    assert built["version"] == "0.1.0" and built["module"].startswith(str(folder)), built["module"]
    return built


def articles_table() -> ConstructorTable:
    fields = tuple(ConstructorField(**field) for field in ARTICLES["fields"])
    return ConstructorTable(ARTICLES["name"], ARTICLES["title"], fields)


async def test_a_database_0_1_0_filled_is_migrated_and_serves_as_before(empty_database, host_factory) -> None:
    built = build_with_0_1_0(str(empty_database.url))
    assert "pb_alembic_version" not in await tables(empty_database)

    await install(empty_database)
    assert await versions(empty_database) == [runner.head()]
    assert await schema_differences(empty_database) == []

    registry = ApiRegistry()
    table = articles_table()
    registry.add_source(ConstructorSource(lambda _: [table]))
    host = await host_factory(empty_database, registry, user_loader=USERS.get)
    await host.api.startup()
    for name, old in built["answers"].items():
        headers = host.auth(built["tokens"][old["token"]]) if old["token"] else {}
        response = await host.client.get("/api/pb/v1" + old["path"], headers=headers)
        assert response.status_code == old["status"], (name, response.text)
        assert _comparable(name, response.json()) == _comparable(name, old["body"]), name

    for name, plain in built["tokens"].items():  # every token still authenticates; the disabled one not
        response = await host.client.get("/api/pb/v1/me", headers=host.auth(plain))
        assert response.status_code == (401 if name == "switched-off" else 200), name
    settings = await SettingsStore(empty_database).all()
    assert settings["service_cors_origins"] == "https://app.example.com"
    assert settings["service_cors_max_age"] == "600"
    tab = await ApiTabStore(empty_database).get("articles")
    assert tab == ApiTab(**ARTICLES["tab"])


def _comparable(name: str, body: dict[str, Any]) -> Any:
    """What must not change between releases: the records and counts, who a token is, the error code."""
    if name == "health":
        return {key: body[key] for key in ("status", "database")}
    if name == "me":
        return {key: value for key, value in body["data"].items() if key != "rate_limit"}
    if "error" in body:
        return body["error"]
    return {"data": body["data"], "total": body.get("meta", {}).get("total")}
