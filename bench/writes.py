"""The writes of `bash bench/run`: create, update and delete under wrk, against PocketBase's and the floor's.

Each system gets the same three requests, one at a time, with a warm-up and a measured `wrk` run
(bench/writes.lua): a create of one article, an update of one field (`price`) of an existing row, a
delete of one row. Every request of every connection names a distinct id: the updates walk the
loaded rows, the deletes rows put in for them beforehand (ids from 50,000,001, written straight into
the system's database, enough for three times the rate the system created at). Before wrk, one
request of each kind is sent and checked (its status, the created row in the database, the deleted
row gone); afterwards the rows the run made are removed, so the read figures of the next run stand on
the same rows.

- pb_headless: `POST /objects/articles`, `PATCH` and `DELETE /objects/articles/<id>` with a token
  carrying `articles.write`; the table is published, so every write also writes its change log entry
  (docs/changes.md), as it does on a site that has not turned the log off.
- PocketBase: the same writes on its records API, as the signed-in user the kit's setup makes, the
  collection's create, update and delete rules opened to signed-in users (bench/pocketbase.py).
- the floor: bench/floor_async.py, the token check and one INSERT, UPDATE or DELETE (on SQLite too;
  the kit's floor only reads).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from bench.dataset import ASYNC_DRIVERS
from bench.load import machine_load, print_result, with_server_figures
from bench.servers import System

HERE = Path(__file__).resolve().parent
LABELS = ("w1_create", "w2_update", "w3_delete")
TITLES = {
    "w1_create": "create one article",
    "w2_update": "update one field of an article",
    "w3_delete": "delete one article",
}
SYSTEMS = ("pb", "pocketbase", "floor")
MARK = "bench write"  # the title of every row a run puts in: what the clean-up removes
FIRST_DELETE = 50_000_001
STATUS = {  # what a successful write answers, per system
    "pb": {"create": 201, "update": 200, "delete": 204},
    "pocketbase": {"create": 200, "update": 200, "delete": 204},
    "floor": {"create": 201, "update": 200, "delete": 204},
}


@dataclass(frozen=True)
class Store:
    """A system's own database, reached beside its server: to put in rows to delete, to check what a
    write left, to clean up. `url` is a SQLite file's path or a server URL; PocketBase's ids are text."""

    url: str
    text_ids: bool = False

    @property
    def sqlite(self) -> bool:
        return "://" not in self.url

    def run(self, sql: str, **values: Any) -> Any:
        """Run one statement; the first column of its first row, if it has rows."""
        if self.sqlite:
            with sqlite3.connect(self.url, timeout=60) as connection:
                cursor = connection.execute(sql, values)
                row = cursor.fetchone() if cursor.description else None
            connection.close()
            return row[0] if row else None
        return asyncio.run(self._server(sql, values))

    async def _server(self, sql: str, values: dict[str, Any]) -> Any:
        url = self.url.split("?", 1)[0]
        engine = create_async_engine(url.replace(url.split("://")[0], ASYNC_DRIVERS[self.kind], 1))
        try:
            async with engine.begin() as connection:
                result = await connection.execute(sa.text(sql), values)
                return result.scalar() if result.returns_rows else None
        finally:
            await engine.dispose()

    @property
    def kind(self) -> str:
        return "sqlite" if self.sqlite else "postgresql" if self.url.startswith("postgresql") else "mariadb"

    def key(self, number: int) -> Any:
        return f"{number:015d}" if self.text_ids else number

    def prefill(self, first: int, count: int) -> None:
        """Rows `first` … `first + count - 1` for the deletes, made by the database itself."""
        last = first + count - 1
        columns = "id, title, body, category"
        if self.kind == "sqlite":
            key = "printf('%015d', n)" if self.text_ids else "n"
            sql = (
                "WITH RECURSIVE s(n) AS (SELECT :first UNION ALL SELECT n + 1 FROM s WHERE n < :last) "
                f"INSERT INTO articles ({columns}) SELECT {key}, :mark, 'to delete', 'w' FROM s"
            )
        elif self.kind == "postgresql":
            sql = (
                f"INSERT INTO articles ({columns}) SELECT g, :mark, 'to delete', 'w' "
                "FROM generate_series(CAST(:first AS integer), CAST(:last AS integer)) AS g"
            )
        else:  # MariaDB's sequence engine
            sql = (
                f"INSERT INTO articles ({columns}) SELECT seq, :mark, 'to delete', 'w' "
                f"FROM seq_{first}_to_{last}"
            )
        self.run(sql, first=first, last=last, mark=MARK)

    def first_free(self) -> int:
        """The first id of the rows put in for the deletes: past every row there is (a create's key
        comes after the highest ever used), and at least FIRST_DELETE. PocketBase makes random ids."""
        if self.text_ids:
            return FIRST_DELETE
        return max(FIRST_DELETE, int(self.run("SELECT coalesce(max(id), 0) FROM articles")) + 1)

    def marked(self) -> int:
        return int(self.run("SELECT count(*) FROM articles WHERE title = :mark", mark=MARK))

    def exists(self, key: Any) -> bool:
        return bool(self.run("SELECT count(*) FROM articles WHERE id = :key", key=key))

    def clean(self) -> None:
        self.run("DELETE FROM articles WHERE title = :mark", mark=MARK)


def body(system: str, kind: str) -> str:
    """The JSON a create or an update sends, in each system's own types."""
    if kind == "update":
        return json.dumps({"price": 1.5})
    stamp: Any = {
        "pb": "2026-01-01T00:00:00Z",
        "pocketbase": "2026-01-01 00:00:00.000Z",
        "floor": 1767225600000,  # the kit's storage: epoch milliseconds
    }[system]
    return json.dumps(
        {
            "title": MARK,
            "body": "A body of a few words.",
            "category": "c1",
            "price": 9.5,
            "published_at": stamp,
        }
    )


def _send(method: str, url: str, authorization: str, data: str | None) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        method=method,
        data=None if data is None else data.encode(),
        headers={"Authorization": authorization, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        return error.code, error.read()[:300]


def check(system: System, token: str, store: Store) -> None:
    """One create, update and delete, each answered as the system documents it and seen in its database:
    a fast wrong answer is not a result."""
    authorization = system.authorization(token)
    listing = system.base + system.prefix + system.list_path
    records = system.base + system.prefix + system.record_path
    want = STATUS[system.name]
    status, answer = _send("POST", listing, authorization, body(system.name, "create"))
    if status != want["create"]:
        raise AssertionError(f"{system.name} create: HTTP {status}: {answer!r}")
    made = (answer.get("data") or answer)["id"]
    if not store.exists(made):
        raise AssertionError(f"{system.name} create answered id {made!r}, which is not in its database")
    status, answer = _send("PATCH", records + str(made), authorization, body(system.name, "update"))
    if status != want["update"]:
        raise AssertionError(f"{system.name} update: HTTP {status}: {answer!r}")
    price = store.run("SELECT price FROM articles WHERE id = :key", key=made)
    if float(price) != 1.5:
        raise AssertionError(f"{system.name} update: the price is {price!r} after it, not 1.5")
    status, answer = _send("DELETE", records + str(made), authorization, None)
    if status != want["delete"] or store.exists(made):
        raise AssertionError(f"{system.name} delete: HTTP {status}, row still there: {store.exists(made)}")


def run(
    system: System, token: str, store: Store, rows: int, plan: Any, out: Path, labels: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Start `system`, check, measure each write of `labels`, clean up, stop."""
    print(f"[bench] start {system.name} for the writes", file=sys.stderr)
    store.clean()
    system.start(out / f"{system.name}.writes.log")
    results: dict[str, dict[str, Any]] = {}
    try:
        check(system, token, store)
        created_rps = 0.0
        for label in labels:
            kind = label.split("_", 1)[1]
            env = {
                "WRITE_KIND": kind,
                "WRITE_AUTH": system.authorization(token),
                "WRITE_BODY": body(system.name, kind),
                "WRITE_WIDTH": "15" if store.text_ids else "0",
                "WRITE_THREADS": str(plan.threads),
                "WRK_REPORT": str(HERE / "wrk_report.lua"),
            }
            path = system.prefix + (system.list_path if kind == "create" else system.record_path)
            if kind == "update":
                env.update(WRITE_FIRST="1", WRITE_COUNT=str(rows))
            if kind == "delete":
                # Rows enough for three times the rate of creates, split between warm-up and run.
                room = int(max(20_000, 3 * max(created_rps, 1_000) * (plan.warmup + plan.duration)))
                env["WRITE_FIRST"] = str(store.first_free())
                store.prefill(int(env["WRITE_FIRST"]), room)
            result = _measure(system, label, path, env, plan, out, room if kind == "delete" else 0)
            if kind == "create":
                created_rps = result["rps"]
            results[label] = result
            print_result(system.name, label, result, rss=False)
    finally:
        system.stop()
        time.sleep(1)
        store.clean()
    return results


def _measure(
    system: System, label: str, path: str, env: dict[str, str], plan: Any, out: Path, room: int
) -> dict[str, Any]:
    """A warm-up, then the measured run; a delete's measured run starts past every id the warm-up
    could have reached, and must not leave its `room`."""
    base = [
        "wrk",
        f"-t{plan.threads}",
        f"-c{plan.connections}",
        "--timeout",
        "10s",
        "-s",
        str(HERE / "writes.lua"),
    ]
    url = system.base + path
    warm_file = out / f"{system.name}.{label}.warmup.json"
    subprocess.run(
        [*base, f"-d{plan.warmup}s", url],
        env={**os.environ, **env, "WRITE_PATH": path, "WRK_OUT": str(warm_file)},
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=plan.warmup + 60,
    )
    start = int(env.get("WRITE_FIRST", "1"))
    first = str(start)
    if room:
        warm = json.loads(warm_file.read_text())
        first = str(start + plan.threads * (warm["requests"] + plan.connections + 1))
    time.sleep(plan.drain)
    result_file = out / f"{system.name}.{label}.json"
    load_average = machine_load()
    ticks = system.cpu_ticks()
    started = time.monotonic()
    subprocess.run(
        [*base, f"-d{plan.duration}s", "--latency", url],
        env={**os.environ, **env, "WRITE_PATH": path, "WRITE_FIRST": first, "WRK_OUT": str(result_file)},
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=plan.duration + 60,
    )
    elapsed = time.monotonic() - started
    ticks = system.cpu_ticks() - ticks
    result = json.loads(result_file.read_text())
    if room and int(first) - start + plan.threads * (result["requests"] + plan.connections) > room:
        print(
            f"  !! {system.name} {label}: the deletes may have run past the rows put in for them",
            file=sys.stderr,
        )
    return with_server_figures(result, result_file, system, label, url, load_average, ticks, elapsed)
