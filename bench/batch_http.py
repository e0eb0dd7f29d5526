"""20 creates over HTTP on SQLite: one pb_headless batch, 20 single pb_headless creates, one PocketBase
`/api/batch` and 20 single PocketBase creates, each server on loopback in a process of its own.

    .venv/bin/python -m bench.batch --pocketbase

pb_headless runs under uvicorn (one process) on a new SQLite file in WAL mode with the notes table of
bench/batch.py; PocketBase 0.40 (its binary from the kit's peer-pocketbase/setup.sh) runs on a new data
directory whose migration makes the same table, lets a signed-in user create and turns its batch API
on (off by default; at most 50 requests, 3 s). Both write as a user with a token, one request at a
time from one keep-alive client. Each round runs the four ways in turn, so a busy machine weighs on
all alike. Printed: rows per second (the median round's wall time) and the server's CPU µs per row
(utime + stime from /proc over all rounds): on a shared machine the CPU figure is the steadier one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench import pocketbase
from bench.batch_notes import prepared
from bench.kit import kit_dir
from bench.servers import CLK_TCK, System

ROWS = 20
PASSWORD = "writer-password-1"
NOTES = "/api/collections/notes/records"
Send = tuple[str, dict[str, Any]]  # a path and its JSON body
# The notes collection a signed-in user may write, the batch API on, request logs off, one user.
MIGRATION = """migrate((app) => {
  app.save(new Collection({
    type: "base", name: "notes",
    listRule: "@request.auth.id != ''", viewRule: "@request.auth.id != ''",
    createRule: "@request.auth.id != ''",
    fields: [{ name: "title", type: "text", max: 200, required: true }, { name: "body", type: "text" }],
  }));
  const settings = app.settings();
  settings.logs.maxDays = 0;
  settings.batch.enabled = true;
  settings.batch.maxRequests = 50;
  settings.batch.timeout = 3;
  app.save(settings);
  const writer = new Record(app.findCollectionByNameOrId("users"));
  writer.set("email", "writer@example.com");
  writer.setPassword("PASSWORD");
  writer.set("verified", true);
  app.save(writer);
});
""".replace("PASSWORD", PASSWORD)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pocketbase_binary() -> Path:
    binary = pocketbase.ROOT / "pocketbase"
    if not binary.is_file():  # the kit's setup fetches it (and a small data set we do not use)
        setup = kit_dir() / "peer-pocketbase" / "setup.sh"
        subprocess.run(["bash", str(setup), "--rows", "1000"], check=True)
    return binary


def pocketbase_server(folder: Path) -> tuple[System, str]:
    """PocketBase on a data directory of its own, and its writer's token."""
    migrations = folder / "pb_migrations"
    migrations.mkdir()
    (migrations / "1700000000_notes.js").write_text(MIGRATION)
    binary, data = str(pocketbase_binary()), str(folder / "pb_data")
    subprocess.run([binary, "migrate", "up", "--dir", data, "--migrationsDir", str(migrations)], check=True)
    base = f"http://127.0.0.1:{free_port()}"
    command = [binary, "serve", "--http", base[7:], "--dir", data, "--migrationsDir", str(migrations)]
    server = System("pocketbase", command, {}, base, "/api/health", "", "", "", "", auth_scheme="")
    server.start(folder / "pocketbase.log")
    login = {"identity": "writer@example.com", "password": PASSWORD}
    answer = httpx.post(f"{base}/api/collections/users/auth-with-password", json=login)
    answer.raise_for_status()
    return server, answer.json()["token"]


def pb_server(folder: Path) -> tuple[System, str]:
    """pb_headless under uvicorn on a new SQLite file, and a token that may create notes."""
    url = f"sqlite:///{folder / 'pb.db'}"
    token = asyncio.run(prepared(url))
    # WAL, as docs/deployment.md recommends for a busy site and as PocketBase runs its own file.
    with contextlib.closing(sqlite3.connect(folder / "pb.db")) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
    base = f"http://127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "uvicorn", "bench.batch_notes:served", "--factory", "--no-access-log"]
    command += ["--host", "127.0.0.1", "--port", base.rsplit(":", 1)[1], "--log-level", "warning"]
    server = System("pb", command, {"PB_BENCH_BATCH_URL": url}, base, "/", "", "", "", "")
    server.start(folder / "pb.log")
    return server, token


def _pb_batch(number: int) -> Send:
    operations = [
        {"op": "create", "object": "notes", "data": {"title": f"batch {number}.{row}", "body": "x" * 200}}
        for row in range(ROWS)
    ]
    return "/api/pb/v1/batch", {"operations": operations}


def _pocketbase_batch(number: int) -> Send:
    requests = [
        {"method": "POST", "url": NOTES, "body": {"title": f"batch {number}.{row}", "body": "x" * 200}}
        for row in range(ROWS)
    ]
    return "/api/batch", {"requests": requests}


def _timed(
    client: httpx.Client, server: System, sends: list[tuple[str, dict[str, Any]]]
) -> tuple[float, int]:
    ticks, started = server.cpu_ticks(), time.perf_counter()
    for path, body in sends:
        answer = client.post(path, json=body)
        if answer.status_code not in (200, 201):
            raise SystemExit(
                f"bench.batch: {server.name} {path} answered {answer.status_code}: {answer.text[:300]}"
            )
    return time.perf_counter() - started, server.cpu_ticks() - ticks


def compare(rounds: int) -> dict[str, tuple[float, float]]:
    """Per way of writing: (rows per second, server CPU µs per row)."""
    with tempfile.TemporaryDirectory() as folder:
        servers: list[System] = []
        try:
            pb, pb_token = pb_server(_mkdir(Path(folder) / "pb"))
            servers.append(pb)
            peer, peer_token = pocketbase_server(_mkdir(Path(folder) / "pocketbase"))
            servers.append(peer)
            return _rounds(rounds, pb, pb_token, peer, peer_token)
        finally:
            for server in servers:
                server.stop()


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _rounds(
    rounds: int, pb: System, pb_token: str, peer: System, peer_token: str
) -> dict[str, tuple[float, float]]:
    walls: dict[str, list[float]] = {}
    ticks: dict[str, int] = {}
    with (
        httpx.Client(base_url=pb.base, headers={"Authorization": f"Bearer {pb_token}"}) as ours,
        httpx.Client(base_url=peer.base, headers={"Authorization": peer_token}) as theirs,
    ):
        for number in range(rounds + 2):  # two rounds to warm up
            single = {"title": f"single {number}", "body": "x" * 200}
            ways = {
                "pb_headless batch": (ours, pb, [_pb_batch(number)]),
                "pb_headless singles": (ours, pb, [("/api/pb/v1/objects/notes", single)] * ROWS),
                "PocketBase batch": (theirs, peer, [_pocketbase_batch(number)]),
                "PocketBase singles": (theirs, peer, [(NOTES, single)] * ROWS),
            }
            for name, (client, server, sends) in ways.items():
                wall, used = _timed(client, server, sends)
                if number >= 2:
                    walls.setdefault(name, []).append(wall)
                    ticks[name] = ticks.get(name, 0) + used
    return {
        name: (ROWS / statistics.median(times), ticks[name] * 1e6 / CLK_TCK / (ROWS * rounds))
        for name, times in walls.items()
    }


def report(rounds: int) -> None:
    figures = compare(rounds)
    print(f"sqlite over HTTP: {ROWS} creates, median of {rounds} rounds (CPU: the server's, all rounds)")
    for name, (rate, cpu) in figures.items():
        print(f"  {name:20s} {rate:8.0f} rows/s  {cpu:8.0f} CPU µs/row")
    print(json.dumps({name: [round(rate), round(cpu)] for name, (rate, cpu) in figures.items()}))
