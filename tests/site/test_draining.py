"""SIGTERM with PB_DRAIN_SECONDS: the site stops listening at once, keeps serving its open connections
for the drain, closing each after its answer, then shuts down (examples/site/draining.py,
docs/deployment.md "Restarts and outages")."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import pytest

from tests.site.commands import ROOT, free_port, run_site, site_env
from tests.site.harness import copy_site_folder
from tests.site.test_init_and_serve import one_error_line, wait_for

DRAIN = 3.0


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[str, dict[str, str]]:
    """One GET of /api/pb/v1/health on an open connection: its status line and headers (lower case)."""
    writer.write(b"GET /api/pb/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    await writer.drain()
    head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)).decode("latin-1")
    status, *lines = head.strip().split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    await reader.readexactly(int(headers["content-length"]))
    return status, headers


@pytest.mark.slow
async def test_sigterm_drains_with_connection_close_then_exits(tmp_path):
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db", PB_DRAIN_SECONDS=str(DRAIN))
    assert run_site("init", env=env).returncode == 0
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "--factory", "examples.site.app:create_app"]
    server = subprocess.Popen(
        [*command, "--port", str(port), "--timeout-keep-alive", "30"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert wait_for(f"http://127.0.0.1:{port}/api/pb/v1/health").status_code == 200
        kept = await asyncio.open_connection("127.0.0.1", port)
        idle = await asyncio.open_connection("127.0.0.1", port)
        for connection in (kept, idle):
            status, headers = await answer(*connection)
            assert status == "HTTP/1.1 200 OK" and headers.get("connection") != "close", headers

        server.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        await asyncio.sleep(0.5)
        # A kept-alive connection is still served, told to close, and closed by the server after it.
        status, headers = await answer(*kept)
        assert status == "HTTP/1.1 200 OK" and headers["connection"] == "close"
        assert await asyncio.wait_for(kept[0].read(), timeout=5) == b""
        # A new connection is refused during the drain: a proxy sends its request to another instance.
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", port)
        assert server.poll() is None
        # The connection left idle is not closed under the client during the drain.
        await asyncio.sleep(DRAIN - 1.5)
        assert not idle[0].at_eof()
        assert server.poll() is None

        output, _ = server.communicate(timeout=60)
        assert time.monotonic() - signalled >= DRAIN
        assert server.returncode in (0, -signal.SIGTERM), output
        assert f"not listening; draining the open connections for {DRAIN} s" in output
        assert "Application shutdown complete" in output
        for _, writer in (kept, idle):
            writer.close()
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate(timeout=30)


async def test_a_drain_that_is_not_a_number_of_seconds_is_one_line_naming_the_variable(tmp_path):
    for written in ("soon", "-1", "301"):
        env = site_env(copy_site_folder(tmp_path / written), tmp_path / "site.db", PB_DRAIN_SECONDS=written)
        line = one_error_line(run_site("serve", "--port", str(free_port()), env=env))
        assert "PB_DRAIN_SECONDS" in line and repr(written) in line, line
