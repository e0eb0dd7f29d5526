"""Clients generated from the example site's own document: every list operator, show and the writes.

The example site runs as a user runs it (`python -m examples.site init`, then `serve` with uvicorn on a
free loopback port). Its document, fetched with a `*` token, goes to openapi-python-client and to
openapi-generator's Python generator (the `openapi-generator-cli` package bundles the jar; it needs
Java); each generated package is imported and every call goes through it. The rows a filter returns
are compared with the rows its predicate selects from the full list, and the writes are checked in
the site's database.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from databases import Database
from openapi_spec_validator import validate

from pb_headless import TokenStore
from tests.support.server import answers, free_port, log_tail, running, wait_until

pytestmark = pytest.mark.slow

# Bytes of the example site's document, as served: about 40,000 in 0.1; conditional requests, cursors,
# count control and Idempotency-Key (docs/caching.md) add about 6,000, the change feeds about 6,000
# more (two operations per object, their shared components kept once; docs/openapi.md), `POST /batch`
# about 4,500 (one item schema per object and write operation, each object's fields once); 0.3's exact
# client contract about 2,500 (the typed `meta`, one `Error` schema, `required` lists) and relation
# paths about 500 (`filter[author.name]`, docs/query.md); filtered changes take the list's filter
# parameters by reference (docs/changes.md), about 2,000.
DOCUMENT_LIMIT = 66_000
Row = dict[str, Any]


@dataclass(frozen=True)
class ExampleSite:
    base: str  # the API root, http://127.0.0.1:<port>/api/pb/v1
    token: str
    document: Path  # the document as served, saved
    database: Path  # the site's SQLite file
    rows: list[Row]  # every published article, by id


@dataclass(frozen=True)
class Case:
    field: str
    operator: str
    value: Any
    matches: Callable[[Row], bool]

    @property
    def key(self) -> str:
        return f"filter[{self.field}][{self.operator}]"


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExampleSite]:
    folder = tmp_path_factory.mktemp("example-site")
    database = folder / "site.db"
    environment = {"PB_DATABASE_URL": f"sqlite:///{database}"}
    log = folder / "server.log"
    with running([sys.executable, "-m", "examples.site", "init"], environment, log) as process:
        assert process.wait(timeout=120) == 0, log_tail(log)
    token = asyncio.run(_star_token(f"sqlite:///{database}"))
    port = free_port()
    serve = [sys.executable, "-m", "examples.site", "serve", "--port", str(port)]
    with running(serve, environment, log) as process:
        base = f"http://127.0.0.1:{port}/api/pb/v1"
        wait_until(process, log, lambda: answers(f"{base}/health"))
        headers = {"Authorization": f"Bearer {token}"}
        document = httpx.get(f"{base}/openapi.json", headers=headers).content
        (folder / "openapi.json").write_bytes(document)
        everything = {"sort": "id", "limit": 50}
        listed = httpx.get(f"{base}/objects/articles", params=everything, headers=headers).json()
        assert listed["meta"]["total"] == len(listed["data"]) >= 4, listed["meta"]
        yield ExampleSite(base, token, folder / "openapi.json", database, listed["data"])


async def _star_token(url: str) -> str:
    database = Database(url)
    await database.connect()
    try:
        _, token = await TokenStore(database).create("generated-client", "*")
    finally:
        await database.disconnect()
    return token


def test_the_example_sites_document_is_valid_and_under_its_size_budget(example_site):
    import json

    document = example_site.document.read_bytes()
    assert len(document) < DOCUMENT_LIMIT, len(document)
    validate(json.loads(document))


def filter_cases(rows: list[Row]) -> list[Case]:
    """At least one case per operator, with values taken from the site's own rows so each one selects
    some rows and leaves others out."""
    ids = [row["id"] for row in rows]
    low, middle, high = ids[0], ids[1], ids[2]
    priced = sorted(Decimal(row["price"]) for row in rows if row["price"] is not None)
    dated = sorted(row["published_at"] for row in rows if row["published_at"] is not None)
    day = dated[len(dated) // 2]
    when = datetime.fromisoformat
    titled = [row for row in rows if "," not in row["title"]]
    word = titled[1]["title"].split()[0].lower()

    def price(row: Row) -> Decimal | None:
        return None if row["price"] is None else Decimal(row["price"])

    return [
        Case("id", "eq", middle, lambda row: row["id"] == middle),
        Case("id", "ne", middle, lambda row: row["id"] != middle),
        Case("id", "gt", middle, lambda row: row["id"] > middle),
        Case("id", "gte", middle, lambda row: row["id"] >= middle),
        Case("id", "lt", middle, lambda row: row["id"] < middle),
        Case("id", "lte", middle, lambda row: row["id"] <= middle),
        Case("id", "in", f"{low},{middle},{high}", lambda row: row["id"] in (low, middle, high)),
        Case("id", "nin", f"{low},{high}", lambda row: row["id"] not in (low, high)),
        Case("id", "between", f"{middle},{high}", lambda row: middle <= row["id"] <= high),
        Case("id", "null", "false", lambda row: True),
        Case("title", "like", word, lambda row: word in row["title"].lower()),
        Case(
            "title",
            "in",
            f"{titled[0]['title']},{titled[2]['title']}",
            lambda row: row["title"] in (titled[0]["title"], titled[2]["title"]),
        ),
        Case("category", "nin", "news", lambda row: row["category"] not in (None, "news")),
        Case("price", "gte", str(priced[-1]), lambda row: (price(row) or -1) >= priced[-1]),
        Case("price", "between", f"0,{priced[0]}", lambda row: 0 <= (price(row) or -1) <= priced[0]),
        Case("price", "null", "true", lambda row: row["price"] is None),
        Case(
            "published_at",
            "lt",
            day,
            lambda row: row["published_at"] is not None and when(row["published_at"]) < when(day),
        ),
        Case("author_id", "eq", rows[0]["author_id"], lambda row: row["author_id"] == rows[0]["author_id"]),
    ]


def test_the_cases_cover_every_operator_and_each_narrows_the_list(example_site):
    cases = filter_cases(example_site.rows)
    assert {case.operator for case in cases} == {
        "eq",
        "ne",
        "gt",
        "gte",
        "lt",
        "lte",
        "like",
        "in",
        "nin",
        "between",
        "null",
    }
    every = {row["id"] for row in example_site.rows}
    for case in cases:
        chosen = {row["id"] for row in example_site.rows if case.matches(row)}
        assert chosen, case.key
        assert chosen != every or case.operator == "null", case.key


def generate(command: list[str], folder: Path, package: str) -> Any:
    """Run a generator, then import the package it wrote into `folder`."""
    run = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(folder))


def tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"the {name} command is not installed (it comes with the `dev` extra)")
    return found


def stored(site: ExampleSite, article_id: int) -> tuple[Any, ...] | None:
    """The row as the site's database holds it, read behind the API's back."""
    with sqlite3.connect(site.database) as connection:
        return connection.execute("SELECT title, price FROM articles WHERE id = ?", (article_id,)).fetchone()


def test_an_openapi_python_client_lists_with_every_operator_shows_and_writes(example_site, tmp_path):
    config = tmp_path / "generator.yaml"
    config.write_text("post_hooks: []\n")
    client_package = generate(
        [
            tool("openapi-python-client"),
            "generate",
            "--path",
            str(example_site.document),
            "--output-path",
            str(tmp_path / "pb_client"),
            "--meta",
            "none",
            "--config",
            str(config),
        ],
        tmp_path,
        "pb_client",
    )
    operations = ("list_articles", "show_articles", "create_articles", "update_articles", "delete_articles")
    api = SimpleNamespace(
        **{name: importlib.import_module(f"pb_client.api.articles.{name}") for name in operations}
    )
    models = importlib.import_module("pb_client.models")
    client = client_package.AuthenticatedClient(base_url=example_site.base, token=example_site.token)
    with client:
        for case in filter_cases(example_site.rows):
            # The names openapi-python-client derives: `filter[title]` → `filtertitle`, `filter` → `filter_`.
            if case.operator == "eq":
                arguments = {f"filter{case.field}": case.value}
            else:
                arguments = {"filter_": models.ListArticlesFilter.from_dict({case.key: case.value})}
            answer = api.list_articles.sync_detailed(client=client, sort="id", limit=50, **arguments)
            assert answer.status_code == 200, (case.key, answer.content)
            expected = [row["id"] for row in example_site.rows if case.matches(row)]
            assert [record.id for record in answer.parsed.data] == expected, case.key

        first = example_site.rows[0]
        shown = api.show_articles.sync_detailed(client=client, id=first["id"])
        assert (shown.status_code, shown.parsed.data.title) == (200, first["title"])

        body = models.ArticlesCreate.from_dict({"title": "Written by a generated client", "price": "12.50"})
        created = api.create_articles.sync_detailed(client=client, body=body)
        assert created.status_code == 201, created.content
        new_id = created.parsed.data.id
        assert stored(example_site, new_id) == ("Written by a generated client", 12.5)

        changed = api.update_articles.sync_detailed(
            client=client, id=new_id, body=models.ArticlesUpdate.from_dict({"title": "Renamed"})
        )
        assert (changed.status_code, changed.parsed.data.title) == (200, "Renamed")
        assert stored(example_site, new_id) == ("Renamed", 12.5)

        deleted = api.delete_articles.sync_detailed(client=client, id=new_id)
        assert deleted.status_code == 204
        assert stored(example_site, new_id) is None
        assert api.show_articles.sync_detailed(client=client, id=new_id).status_code == 404
        _pages_revalidates_and_retries(api, models, client, example_site, first)


def _pages_revalidates_and_retries(api: Any, models: Any, client: Any, site: ExampleSite, first: Row) -> None:
    """docs/caching.md and docs/query.md through the generated client: cursors, 304, 412, a replay."""
    seen: list[int] = []
    page = api.list_articles.sync_detailed(client=client, sort="id", limit=2)
    while True:
        assert page.status_code == 200, page.content
        seen += [record.id for record in page.parsed.data]
        cursor = page.parsed.meta.next_cursor
        if not isinstance(cursor, str):
            break
        page = api.list_articles.sync_detailed(client=client, sort="id", limit=2, after=cursor)
    assert seen == [row["id"] for row in site.rows]

    shown = api.show_articles.sync_detailed(client=client, id=first["id"])
    tag = shown.headers["etag"]
    current = api.show_articles.sync_detailed(client=client, id=first["id"], if_none_match=tag)
    assert current.status_code == 304
    lost = models.ArticlesUpdate.from_dict({"title": "Lost"})
    stale = api.update_articles.sync_detailed(client=client, id=first["id"], body=lost, if_match='"old"')
    assert stale.status_code == 412 and stored(site, first["id"])[0] == first["title"]

    body = models.ArticlesCreate.from_dict({"title": "Sent twice by a generated client"})
    once = api.create_articles.sync_detailed(client=client, body=body, idempotency_key="generated-client-1")
    twice = api.create_articles.sync_detailed(client=client, body=body, idempotency_key="generated-client-1")
    assert once.status_code == twice.status_code == 201
    assert twice.parsed.data.id == once.parsed.data.id and twice.headers["idempotent-replayed"] == "true"
    assert api.delete_articles.sync_detailed(client=client, id=once.parsed.data.id).status_code == 204


def test_an_openapi_generator_client_lists_with_every_operator_shows_and_writes(example_site, tmp_path):
    if shutil.which("java") is None:
        pytest.skip("openapi-generator runs on Java, which is not installed (Debian: default-jre-headless)")
    package = generate(
        [
            tool("openapi-generator-cli"),
            "generate",
            "-i",
            str(example_site.document),
            "-g",
            "python",
            "-o",
            str(tmp_path),
            "--package-name",
            "pb_oag",
        ],
        tmp_path,
        "pb_oag",
    )
    models = importlib.import_module("pb_oag.models")
    configuration = package.Configuration(host=example_site.base, access_token=example_site.token)
    with package.ApiClient(configuration) as client:
        articles = package.ArticlesApi(client)
        for case in filter_cases(example_site.rows):
            if case.operator == "eq":  # `filter[title]` → `filter_title`
                arguments = {f"filter_{case.field}": case.value}
            else:  # `filter` → `filter`, its model named after the operation
                arguments = {"filter": models.ListArticlesFilterParameter.from_dict({case.key: case.value})}
            answer = articles.list_articles(sort="id", limit=50, **arguments)
            expected = [row["id"] for row in example_site.rows if case.matches(row)]
            assert [record.id for record in answer.data] == expected, case.key

        first = example_site.rows[0]
        assert articles.show_articles(first["id"]).data.title == first["title"]

        body = models.ArticlesCreate.from_dict({"title": "Written by openapi-generator", "price": "7.25"})
        created = articles.create_articles_with_http_info(body)
        assert created.status_code == 201
        new_id = created.data.data.id
        assert stored(example_site, new_id) == ("Written by openapi-generator", 7.25)

        # The constructor, not from_dict: from_dict sets every field it does not find to null, and a PATCH
        # sends what is set.
        changed = articles.update_articles(new_id, models.ArticlesUpdate(title="Renamed too"))
        assert changed.data.title == "Renamed too"
        assert stored(example_site, new_id) == ("Renamed too", 7.25)

        assert articles.delete_articles_with_http_info(new_id).status_code == 204
        assert stored(example_site, new_id) is None
        with pytest.raises(package.exceptions.NotFoundException):
            articles.show_articles(new_id)


TYPESCRIPT = Path(__file__).with_name("typescript")


def test_typescript_types_generated_from_the_document_compile_with_the_typed_client(example_site):
    """tests/openapi/typescript: openapi-typescript turns the document into types; `tsc --strict`
    compiles client.ts (list, page by cursor, create with an Idempotency-Key) against them."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        if os.environ.get("PB_REQUIRE_SERVICES") == "1":
            pytest.fail("node and npm are required (PB_REQUIRE_SERVICES=1)")
        pytest.skip("node and npm are not installed")
    binaries = TYPESCRIPT / "node_modules" / ".bin"
    if not (binaries / "tsc").exists():  # .ci/run installs them; a fresh clone installs them here
        command = [npm, "ci", "--no-audit", "--no-fund"]
        installed = subprocess.run(command, cwd=TYPESCRIPT, capture_output=True, text=True, timeout=600)
        assert installed.returncode == 0, installed.stderr[-4000:]
    (TYPESCRIPT / "generated").mkdir(exist_ok=True)
    steps = [
        [str(binaries / "openapi-typescript"), str(example_site.document), "-o", "generated/api.ts"],
        [str(binaries / "tsc"), "--strict", "--noEmit", "-p", "."],
    ]
    for step in steps:
        run = subprocess.run(step, cwd=TYPESCRIPT, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"{' '.join(step)}\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
