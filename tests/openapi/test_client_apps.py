"""Generated clients against a live server, on each database: the app a developer writes works as written.

A host built with the public API serves the demo site with uvicorn (tests/support/live.py); its
`/openapi.json`, fetched with the app's token, goes to the tools app developers use:

- openapi-python-client, whose package the Python app (python_client/app.py) imports; `mypy --strict`
  checks the app with the package (no casts, no `type: ignore`, no type of its own);
- openapi-typescript, whose types the TypeScript app (typescript/app.ts, on openapi-fetch) is compiled
  against with `tsc --strict`, then run under node.

Each app lists with a filter, gets page 2 by `page`, walks cursors to the end, lists with `count=none`,
creates with an `Idempotency-Key` and replays it, updates with the current and then a stale `If-Match`,
reads the change feed from a cursor, decodes a 404 as the document's error type, and sends a batch
(a labelled create, an update of it by `{"$ref": label}` as its id, a delete) and one that fails at its
second operation. Each prints what it saw; this test compares it with the database.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.live import serving

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
TYPESCRIPT = HERE / "typescript"
PYTHON_APP = HERE / "python_client" / "app.py"
SCOPES = "articles.*,authors.read"


async def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run a tool off the event loop (the server under test answers on it); its stdout, or a failure."""
    done = await asyncio.to_thread(
        subprocess.run, command, cwd=cwd, capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


async def published_ids(demo: Any, where: str = "") -> list[int]:
    rows = await demo.database.fetch_all(
        f"SELECT id FROM demo_articles WHERE published = TRUE {where} ORDER BY id"
    )
    return [row[0] for row in rows]


async def check_report(demo: Any, report: dict[str, Any], app: str) -> None:
    """What the app saw is what the database holds; its writes happened once."""
    later = {report["created"], report["batch_created"]}
    before = [identifier for identifier in await published_ids(demo) if identifier not in later]
    assert report["filtered"] == await published_ids(demo, "AND category = 'news'")
    assert all(length > 0 for length in report["title_lengths"])
    assert (report["page_two"], report["page_two_offset"]) == (before[2:4], 2)
    assert (report["uncounted_total"], report["uncounted_has_more"]) == (None, True)
    # The walk ran before the create: every row once, and no parameter the app did not send.
    assert report["walked"] == before and report["walk_ignored"] == []
    assert (report["created_status"], report["replayed"], report["replayed_header"]) == (
        201,
        report["created"],
        "true",
    )
    renamed = f"Renamed by the {app} app"
    assert (report["renamed_status"], report["renamed_title"]) == (200, renamed)
    assert (report["stale_status"], report["stale_error"]) == (412, "precondition_failed")
    assert report["changes"] == [["upsert", report["created"], renamed]]
    assert (report["missing_status"], report["missing_error"]) == (404, "not_found")
    assert "99999" in report["missing_message"]
    rows = await demo.database.fetch_all(
        "SELECT id, title FROM demo_articles WHERE body = :body",
        {"body": "openapi-python-client" if app == "Python" else "openapi-fetch"},
    )
    assert [(row[0], row[1]) for row in rows] == [(report["created"], renamed)]
    await check_batches(demo, report, app)


async def check_batches(demo: Any, report: dict[str, Any], app: str) -> None:
    """The batch wrote its three operations, the failing one nothing (docs/writes.md, "Atomic batches")."""
    batched = f"Renamed in the {app} batch"
    assert report["batch_statuses"] == [201, 200, 204]
    assert report["batch_renamed"] == [report["batch_created"], batched]
    assert report["batch_etags"] == [True, True, False]
    assert report["failed_batch"] == [404, "not_found", 1]
    rows = await demo.database.fetch_all(
        "SELECT id, title FROM demo_articles WHERE body = :body", {"body": f"{app.lower()} batch"}
    )
    assert [(row[0], row[1]) for row in rows] == [(report["batch_created"], batched)]
    gone = await demo.database.fetch_all(
        "SELECT id FROM demo_articles WHERE id = :id", {"id": report["batch_deleted"]}
    )
    assert gone == []


async def live_document(demo: Any, root: str, token: str, folder: Path) -> Path:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client:
        answer = await client.get(f"{root}/api/pb/v1/openapi.json")
    assert answer.status_code == 200, answer.text
    document = folder / "openapi.json"
    document.write_bytes(answer.content)
    return document


def tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"the {name} command is not installed (it comes with the `dev` extra)")
    return found


async def test_an_app_on_openapi_python_client_pages_writes_and_reads_errors_as_documented(demo, tmp_path):
    token = await demo.token(SCOPES)
    async with serving(demo.app) as root:
        document = await live_document(demo, root, token, tmp_path)
        config = tmp_path / "generator.yaml"
        config.write_text("post_hooks: []\n")
        generate = [tool("openapi-python-client"), "generate", "--path", str(document)]
        options = ["--output-path", str(tmp_path / "pb_client"), "--meta", "none", "--config", str(config)]
        await run([*generate, *options], tmp_path)
        environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
        if demo.database.url.dialect == "sqlite":  # the types are the same whatever the database
            checked = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(PYTHON_APP)]
            await run(checked, tmp_path, {**environment, "MYPYPATH": str(tmp_path)})
        app = [sys.executable, str(PYTHON_APP), f"{root}/api/pb/v1", token]
        printed = await run(app, tmp_path, environment)
    await check_report(demo, json.loads(printed), "Python")


def node_tools() -> Path:
    """tests/openapi/typescript/node_modules/.bin, installed from its package-lock.json when missing."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        if os.environ.get("PB_REQUIRE_SERVICES") == "1":
            pytest.fail("node and npm are required (PB_REQUIRE_SERVICES=1)")
        pytest.skip("node and npm are not installed")
    binaries = TYPESCRIPT / "node_modules" / ".bin"
    if not (TYPESCRIPT / "node_modules" / "openapi-fetch").exists():  # .ci/run installs them
        command = [npm, "ci", "--no-audit", "--no-fund"]
        installed = subprocess.run(command, cwd=TYPESCRIPT, capture_output=True, text=True, timeout=600)
        assert installed.returncode == 0, installed.stderr[-4000:]
    return binaries


def test_the_typescript_app_has_no_non_null_assertion_cast_or_type_of_its_own():
    source = re.sub(r"//[^\n]*", "", (TYPESCRIPT / "app.ts").read_text())
    assert not re.search(r"[\w)\]]!(?!=)", source), "a non-null assertion"
    assert not re.search(r"\bas\s+(?!const\b)\w", source) and "<any>" not in source, "a cast"
    assert not re.search(r"^\s*(export\s+)?(type|interface)\s", source, re.MULTILINE), "a type of its own"
    assert "any" not in re.findall(r"\w+", source), "an `any`"


async def test_an_app_on_openapi_fetch_compiles_strictly_and_runs_under_node(demo, tmp_path):
    binaries = node_tools()
    token = await demo.token(SCOPES)
    async with serving(demo.app) as root:
        document = await live_document(demo, root, token, tmp_path)
        (tmp_path / "generated").mkdir()
        base = json.dumps(f"{root}/api/pb/v1")
        target = f"export const BASE = {base};\nexport const TOKEN = {json.dumps(token)};\n"
        (tmp_path / "generated" / "target.ts").write_text(target)
        shutil.copy(TYPESCRIPT / "app.ts", tmp_path / "app.ts")
        (tmp_path / "node_modules").symlink_to(TYPESCRIPT / "node_modules", target_is_directory=True)
        (tmp_path / "package.json").write_text('{"private": true, "type": "module"}\n')
        build = {"extends": str(TYPESCRIPT / "tsconfig.json"), **APP}
        (tmp_path / "tsconfig.json").write_text(json.dumps(build))
        await run([str(binaries / "openapi-typescript"), str(document), "-o", "generated/api.ts"], tmp_path)
        await run([str(binaries / "tsc"), "--strict", "-p", "."], tmp_path)
        printed = await run(["node", "build/app.js"], tmp_path)
    await check_report(demo, json.loads(printed), "TypeScript")


# The app's own build: the repository's compiler options (ES2022 modules, strict), emitting JavaScript.
APP = {
    "compilerOptions": {"noEmit": False, "rootDir": ".", "outDir": "build"},
    "include": ["app.ts", "generated/api.ts", "generated/target.ts"],
}
