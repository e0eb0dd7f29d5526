"""Headless Chromium (Debian's, through Playwright) against a real examples/site server.

Each test gets its own site: a temporary SQLite database, initialised with the site's own commands,
an administrator, and uvicorn on a free 127.0.0.1 port. Browser tests skip with the reason when
Playwright or Chromium is missing, and fail instead under PB_REQUIRE_SERVICES=1 (CI).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.openapi.serving import free_port, serving
from tests.support.server import REPOSITORY

CHROMIUM = os.environ.get("PB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ADMIN = ("owner", "correct horse battery")


def unavailable(reason: str) -> None:
    if os.environ.get("PB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (PB_REQUIRE_SERVICES=1 makes it required)")
    pytest.skip(reason)


@dataclass
class Site:
    """A running examples/site: its address, database URL and administrator."""

    url: str
    database_url: str
    log: Path

    def token(self, scopes: str = "*") -> str:
        """A new API token's plain value, made with the library's TokenStore on the site's database."""
        from databases import Database

        from pb_headless import TokenStore

        async def create() -> str:
            database = Database(self.database_url)
            await database.connect()
            try:
                _, plain = await TokenStore(database).create(f"browser-{os.urandom(4).hex()}", scopes)
                return plain
            finally:
                await database.disconnect()

        # Playwright's sync API keeps an event loop running in this thread: use another one.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, create()).result(timeout=60)


def run_site_command(arguments: list[str], environment: dict[str, str]) -> None:
    command = [sys.executable, "-m", "examples.site", *arguments]
    env = {**os.environ, **environment, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(command, cwd=REPOSITORY, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(arguments)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture
def start_site(tmp_path: Path) -> Iterator[Any]:
    """`start_site(viewer_url=None)` → a running `Site`; every site is stopped after the test."""
    if not (REPOSITORY / "examples" / "site" / "__main__.py").exists():
        pytest.skip("examples/site is not there")
    stops: list[Any] = []

    def start(viewer_url: str | None = None) -> Site:
        folder = tmp_path / f"site-{len(stops)}"
        folder.mkdir()
        environment = {"PB_DATABASE_URL": f"sqlite:///{folder / 'site.db'}"}
        run_site_command(["init"], environment)
        run_site_command(["admin", "create", "--username", ADMIN[0], "--password", ADMIN[1]], environment)
        if viewer_url:
            environment["PB_DOCS_VIEWER_URL"] = viewer_url
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "examples.site", "serve", "--host", "127.0.0.1", "--port", str(port)]
        context = serving(command, f"{url}/mgr/login", folder / "server.log", environment)
        context.__enter__()
        stops.append(context)
        return Site(url, environment["PB_DATABASE_URL"], folder / "server.log")

    yield start
    for context in reversed(stops):
        context.__exit__(None, None, None)


@pytest.fixture
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (it comes with the `dev` extra)")
    if not Path(CHROMIUM).exists():
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def swagger_ui_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """swagger-ui-dist from the npm registry, installed for this session (never kept in the repository)."""
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm is not installed, so swagger-ui-dist cannot be fetched")
    folder = tmp_path_factory.mktemp("swagger-ui")
    command = [
        str(npm),
        "install",
        "--prefix",
        str(folder),
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel",
        "error",
        "swagger-ui-dist@5",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        unavailable("npm install swagger-ui-dist did not finish within 300 s")
    files = folder / "node_modules" / "swagger-ui-dist"
    if done.returncode != 0 or not (files / "swagger-ui-bundle.js").exists():
        unavailable(f"npm could not install swagger-ui-dist: {done.stderr.strip()[-500:]}")
    return files


@pytest.fixture
def viewer_server(swagger_ui_files: Path, tmp_path: Path) -> Iterator[str]:
    """The viewer's files over HTTP on a free 127.0.0.1 port, as a CDN would serve them."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "http.server",
        str(port),
        "--bind",
        "127.0.0.1",
        "--directory",
        str(swagger_ui_files),
    ]
    with serving(command, f"{url}/swagger-ui.css", tmp_path / "viewer.log"):
        yield url
