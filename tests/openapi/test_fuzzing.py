"""schemathesis against a real server of the demo host, over every endpoint, with its default checks.

The document is the one a `*` token gets from `/openapi.json`; schemathesis authenticates through the
document's own security schemes (bearer and X-API-Key), generates valid and invalid requests for
every operation, and checks every answer against the document (status, headers, bodies, 4xx for
invalid data, 2xx for valid data, 405 for undocumented methods, resources gone after DELETE...).
The seed is fixed so that a failure is reproducible; a failure is a bug to fix, never to exclude.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pb_headless import TokenStore
from tests.openapi.serving import free_port, log_tail, serving, uvicorn_command
from tests.support.demo import create_demo

pytestmark = pytest.mark.slow

SEED = 1
MAX_EXAMPLES = 25
CONFIG = """
[auth.openapi.bearerAuth]
bearer = "${PB_FUZZ_TOKEN}"

[auth.openapi.apiKeyAuth]
api_key = "${PB_FUZZ_TOKEN}"
"""


def schemathesis_command() -> list[str]:
    pytest.importorskip("schemathesis")
    beside = Path(sys.executable).with_name("schemathesis")
    found = str(beside) if beside.exists() else shutil.which("schemathesis")
    if found is None:
        pytest.skip("the schemathesis command is not installed (it comes with the `dev` extra)")
    return [found]


async def test_schemathesis_finds_nothing_on_any_endpoint_with_a_star_token(sqlite_database, tmp_path):
    command = schemathesis_command()
    await create_demo(sqlite_database)
    _, token = await TokenStore(sqlite_database).create("fuzzer", "*")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server_log = tmp_path / "server.log"
    environment = {"PB_OPENAPI_DATABASE": str(sqlite_database.url)}
    server = uvicorn_command("tests.openapi.demo_app:app", port)
    with serving(server, f"{base}/ready", server_log, environment):
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client:
            answer = await client.get(f"{base}/api/pb/v1/openapi.json")
        document = answer.json()
        (tmp_path / "openapi.json").write_text(json.dumps(document))
        (tmp_path / "schemathesis.toml").write_text(CONFIG)
        arguments = [*command, "--config-file", str(tmp_path / "schemathesis.toml"), "run",
                     str(tmp_path / "openapi.json"), "--url", document["servers"][0]["url"],
                     "--seed", str(SEED), "--max-examples", str(MAX_EXAMPLES),
                     "--generation-database", "none", "--request-timeout", "20", "--no-color"]
        run = await asyncio.to_thread(
            subprocess.run, arguments, cwd=tmp_path, capture_output=True, text=True, timeout=1500,
            env={**os.environ, "PB_FUZZ_TOKEN": token, "NO_COLOR": "1"})
    report = run.stdout + run.stderr
    assert run.returncode == 0, f"{report[-25000:]}\n--- server log ---\n{log_tail(server_log)}"
    operations = sum(len(methods) for methods in document["paths"].values())
    assert operations == 13  # 4 service endpoints, 5 + 2 object operations, 2 custom routes
    assert f"Tested: {operations}" in report, report[-5000:]
