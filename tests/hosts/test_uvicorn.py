"""The Starlette host under a real uvicorn process on 127.0.0.1, started the way its README line says."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
START_DEADLINE = 30.0
STOP_DEADLINE = 15.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_module(*args: str, env: dict[str, str], **options) -> subprocess.Popen:
    # The repository first on the path: a site-packages `examples` namespace must not shadow ours.
    env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "examples.starlette_host", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **options,
    )


def wait_until_serving(process: subprocess.Popen, base: str) -> None:
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"uvicorn exited with {process.returncode}: {process.stderr.read()}")
        try:
            if httpx.get(base + "/", timeout=1.0).status_code == 200:  # the host's page: not rate limited
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"uvicorn did not answer within {START_DEADLINE} s")


def stop(process: subprocess.Popen) -> tuple[int, str]:
    process.terminate()
    try:
        _, errors = process.communicate(timeout=STOP_DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        _, errors = process.communicate(timeout=STOP_DEADLINE)
    return process.returncode, errors


@pytest.mark.slow
async def test_the_starlette_host_serves_the_api_under_uvicorn(tmp_path):
    env = {"PB_DATABASE_URL": f"sqlite:///{tmp_path / 'bookshop.db'}"}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = run_module("--host", "127.0.0.1", "--port", str(port), env=env)
    try:
        wait_until_serving(server, base)
        made = run_module("token", "--scopes", "books.read", env=env)
        output, _ = made.communicate(timeout=60)
        assert made.returncode == 0
        token = output.strip().splitlines()[-1]
        assert token.startswith("pb_")
        async with httpx.AsyncClient(base_url=base, timeout=10.0) as client:
            page = await client.get("/")
            assert "Roadside Picnic" in page.text
            assert not any(key.startswith("x-ratelimit") for key in page.headers)
            stats = await client.get("/api/pb/v1/books/stats", headers={"Authorization": f"Bearer {token}"})
            assert stats.status_code == 200
            assert stats.json()["data"] == {"books": 3, "cheapest": "8.25", "dearest": "12.00"}
            assert stats.headers["x-ratelimit-limit"] == "120"
            refused = await client.get("/api/pb/v1/books/stats")
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"] == 'Bearer realm="pb_headless"'
            report = await client.get("/reports/books.csv", headers={"X-API-Key": token})
            assert report.text.startswith("title,year")
            assert (await client.get("/api/other")).status_code == 404
    finally:
        code, errors = stop(server)
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal it captured.
    assert code in (0, -15), errors
    assert "Application startup complete" in errors and "Application shutdown complete" in errors
