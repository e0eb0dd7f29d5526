"""The README's first command: `quickstart` prints a curl line that works as printed on the real server."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import socket
import subprocess
import sys
import time

import httpx
import pytest

from examples.site.commands import init
from examples.site.config import SiteConfig
from examples.site.server import prepare_demo
from tests.site.commands import ROOT, free_port, run_site, site_env
from tests.site.harness import copy_site_folder

pytestmark = pytest.mark.slow
STARTUP_SECONDS = 60


async def read_until_curl(stream: asyncio.StreamReader) -> list[str]:
    lines: list[str] = []
    while True:
        raw = await stream.readline()
        if not raw:
            raise AssertionError("quickstart ended before printing a curl line:\n" + "\n".join(lines))
        lines.append(raw.decode().rstrip("\n"))
        if lines[-1].strip().startswith("curl "):
            return lines


async def wait_until_serving(port: int) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if (await client.get(f"http://127.0.0.1:{port}/api/pb/v1/health")).status_code == 200:
                    return
            await asyncio.sleep(0.2)
    raise AssertionError(f"nothing answered on port {port} within {STARTUP_SECONDS}s")


def run_as_printed(line: str) -> tuple[int, str]:
    """The curl line through a shell, as a user pastes it; without curl, the same request by httpx."""
    if shutil.which("curl"):
        result = subprocess.run(
            ["bash", "-c", line + " --silent --max-time 20"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return result.returncode, result.stdout
    words = shlex.split(line)
    header = words[words.index("-H") + 1]
    name, _, value = header.partition(": ")
    answer = httpx.get(words[-1], headers={name: value}, timeout=20)
    return (0 if answer.status_code == 200 else 22), answer.text


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 15)
        except TimeoutError:
            process.kill()
            await process.wait()


async def test_the_printed_curl_line_lists_the_articles_of_the_running_site(tmp_path):
    port = free_port()
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "examples.site",
        "quickstart",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        lines = await asyncio.wait_for(read_until_curl(process.stdout), STARTUP_SECONDS)
        printed = "\n".join(lines)
        assert f"http://127.0.0.1:{port}/mgr/login" in printed
        assert f"http://127.0.0.1:{port}/mgr/pb/docs?ctx=mgr" in printed
        assert "user: admin   password: " in printed
        curl = lines[-1].strip()
        assert curl.endswith(f"http://127.0.0.1:{port}/api/pb/v1/objects/articles")
        await wait_until_serving(port)
        status, body = await asyncio.to_thread(run_as_printed, curl)
        assert status == 0, body
        assert "Новости компании" in body and '"total":4' in body
    finally:
        await stop(process)


async def test_quickstart_refuses_a_busy_port_before_printing_anything(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db")
        result = run_site("quickstart", "--port", str(busy.getsockname()[1]), env=env)
    assert result.returncode != 0 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "cannot listen" in result.stderr


async def test_a_second_quickstart_keeps_the_admin_and_reissues_its_token(tmp_path):
    config = SiteConfig(
        site_dir=copy_site_folder(tmp_path / "site"), database_url=f"sqlite:///{tmp_path / 's.db'}"
    )
    await init(config)
    first = await prepare_demo(config)
    second = await prepare_demo(config)
    assert first.admin_password and second.admin_password is None
    assert first.token != second.token
    assert second.notes == ["token 'quickstart' existed: reissued, its old value no longer works"]
