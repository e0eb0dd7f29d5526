"""`python -m examples.site init` with any models.py and an empty folder, `serve --workers`, and a
site that cannot start saying why in one line, under `serve` and under uvicorn itself."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.site.commands import ROOT, free_port, run_site, site_env
from tests.site.harness import copy_site_folder
from tests.support.databases import open_database, url_for

DECLARATIVE_MODELS = """
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Model(DeclarativeBase):
    pass


class Book(Model):
    __tablename__ = "books"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(sa.String(200))
    published: Mapped[bool] = mapped_column(default=True)
"""
BOOKS_API = """
from core.App.models import Book

API = {"books": {"model": Book, "fields": ["title"], "operations": ["list", "show"]}}
"""


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def books_site(folder: Path) -> Path:
    app = folder / "core" / "App"
    app.mkdir(parents=True)
    (app / "models.py").write_text(DECLARATIVE_MODELS)
    (app / "api.py").write_text(BOOKS_API)
    return folder


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
async def test_init_creates_the_tables_of_a_declarative_base_whatever_its_name(kind, tmp_path):
    async with open_database(kind, tmp_path, installed=False) as database:
        url = url_for(kind, tmp_path)
        result = run_site("init", env=site_env(books_site(tmp_path / "books"), url))
        assert result.returncode == 0, result.stderr
        assert await database.fetch_all("SELECT id, title, published FROM books") == []


async def test_init_says_what_it_looked_for_when_models_py_has_no_tables(tmp_path):
    site = tmp_path / "site"
    (site / "core" / "App").mkdir(parents=True)
    (site / "core" / "App" / "models.py").write_text("TITLE = 'no tables here'\n")
    result = run_site("init", env=site_env(site, tmp_path / "site.db"))
    assert result.returncode == 0, result.stderr
    assert "defines no tables" in result.stdout
    assert "MetaData" in result.stdout and "declarative base" in result.stdout


async def test_init_writes_a_starting_declaration_file_into_an_empty_site_folder(tmp_path):
    site = tmp_path / "empty"
    site.mkdir()
    env = site_env(site, tmp_path / "site.db")
    first = run_site("init", env=env)
    assert first.returncode == 0, first.stderr
    api_file = site / "core" / "App" / "api.py"
    assert f"created {api_file}" in first.stdout
    namespace: dict = {}
    exec(compile(api_file.read_text(), str(api_file), "exec"), namespace)
    assert namespace["API"] == {}
    api_file.write_text(api_file.read_text() + "\n# edited by the owner\n")
    second = run_site("init", env=env)
    assert second.returncode == 0 and "created" not in second.stdout
    assert api_file.read_text().endswith("# edited by the owner\n")  # never overwritten


async def test_serve_refuses_a_folder_without_a_declaration_file_and_names_init(tmp_path):
    env = site_env(tmp_path, tmp_path / "site.db")
    line = one_error_line(run_site("serve", "--port", str(free_port()), env=env))
    assert "core/App/api.py" in line and "init" in line


async def test_serve_refuses_a_bad_worker_count_in_one_line(tmp_path):
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db")
    for count in ("0", "many", "1000"):
        assert "invalid worker count" in one_error_line(run_site("serve", "--workers", count, env=env))


def wait_for(url: str, seconds: float = 90) -> httpx.Response:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            time.sleep(0.3)
    raise AssertionError(f"nothing answered at {url} within {seconds}s")


@pytest.mark.slow
async def test_serve_with_workers_runs_that_many_uvicorn_workers_on_one_port(tmp_path):
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db")
    assert run_site("init", env=env).returncode == 0
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "examples.site", "serve", "--port", str(port), "--workers", "2"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        assert wait_for(f"http://127.0.0.1:{port}/api/pb/v1/health").status_code == 200
        deadline = time.monotonic() + 90
        while log.read_text().count("Application startup complete") < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
        text = log.read_text()
        assert text.count("Application startup complete") == 2, text
        workers = {
            line.split("[")[1].split("]")[0] for line in text.splitlines() if "Started server process" in line
        }
        assert len(workers) == 2 and str(server.pid) not in workers
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0, log.read_text()


def uvicorn_factory(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "examples.site.app:create_app",
        "--port",
        str(free_port()),
    ]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("ERROR")]


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        ("api.py", "\ndef broken(:\n", "SyntaxError"),
        ("routes.py", "def broken(:\n", "SyntaxError"),
        ("routes.py", "import no_such_module_anywhere\n", "No module named 'no_such_module_anywhere'"),
    ],
)
async def test_a_broken_site_file_stops_uvicorn_with_one_line_naming_it(tmp_path, file, text, expected):
    site = copy_site_folder(tmp_path / "site")
    env = site_env(site, tmp_path / "site.db")
    assert run_site("init", env=env).returncode == 0
    broken = site / "core" / "App" / file
    broken.write_text((broken.read_text() if broken.exists() else "") + text)
    errors = error_lines(uvicorn_factory(env))
    assert len(errors) == 1 and str(broken) in errors[0] and expected in errors[0], errors
    line = one_error_line(run_site("serve", "--port", str(free_port()), env=env))
    assert str(broken) in line and expected in line


async def test_a_startup_failure_under_uvicorn_is_one_line_then_uvicorns_own(tmp_path):
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "never-initialised.db")
    errors = error_lines(uvicorn_factory(env))
    assert "is not initialised" in errors[0] and "init" in errors[0]
    assert errors[1:] == ["ERROR:    Application startup failed. Exiting."]


async def test_pb_debug_shows_the_traceback_of_a_startup_failure(tmp_path):
    site = copy_site_folder(tmp_path / "site")
    env = site_env(site, tmp_path / "site.db", PB_DEBUG="1")
    assert run_site("init", env=env).returncode == 0
    (site / "core" / "App" / "routes.py").write_text("def broken(:\n")
    result = uvicorn_factory(env)
    assert result.returncode != 0 and "Traceback" in result.stderr
    served = run_site("serve", "--port", str(free_port()), env=env)
    assert "Traceback" in served.stderr and served.stderr.strip().splitlines()[-1].startswith(
        "examples.site: error"
    )
