"""The cluster that `scripts/cluster` runs, as the checks see it: its addresses, processes and parts.

Everything is read from `cluster.env` in the cluster's folder; the parts are stopped the way an
operator or a failure would stop them (SIGTERM, `pg_ctl stop`), and brought back with
`scripts/cluster start`, which starts whatever is not running on the ports it had.
"""

from __future__ import annotations

import itertools
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

REPOSITORY = Path(__file__).resolve().parents[2]
SCRIPT = REPOSITORY / "scripts" / "cluster"
API = "/api/pb/v1"

# Every check speaks as clients of its own: nginx (127.0.0.1) is a trusted proxy and appends the peer
# it saw, so an X-Forwarded-For sent by a check names the client pb_headless counts.
_addresses = (f"10.{a}.{b}.{c}" for a in itertools.count(1) for b in range(256) for c in range(1, 255))


def new_client() -> dict[str, str]:
    """Headers making the next requests come from a client never seen before."""
    return {"X-Forwarded-For": next(_addresses)}


def read_env(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key] = shlex.split(value)[0] if value else ""
    return values


@dataclass
class Cluster:
    folder: Path

    @property
    def env(self) -> dict[str, str]:
        return read_env(self.folder / "cluster.env")

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.env['PB_CLUSTER_PORT']}"

    @property
    def instances(self) -> list[str]:
        return [f"http://127.0.0.1:{self.env[f'INSTANCE_{n}_PORT']}" for n in (1, 2)]

    @property
    def database_url(self) -> str:
        return self.env["PB_DATABASE_URL"]

    def script(self, command: str, timeout: float = 120) -> str:
        environment = {**os.environ, "PB_CLUSTER_DIR": str(self.folder)}
        done = subprocess.run(
            ["bash", str(SCRIPT), command],
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"scripts/cluster {command} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
            )
        return done.stdout

    def console(self, *args: str) -> str:
        """`pb-headless` against the cluster's database; its output."""
        command = [str(REPOSITORY / ".venv" / "bin" / "pb-headless"), "--database", self.database_url, *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, f"pb-headless {' '.join(args)}: {done.stderr}"
        return done.stdout

    def token(self, name: str, scopes: str = "*") -> str:
        return self.console("token", "create", "--name", name, "--scopes", scopes).strip().splitlines()[-1]

    # -- processes -----------------------------------------------------------------------------------
    def pid(self, part: str) -> int:
        return int((self.folder / f"{part}.pid").read_text())

    def instance_pids(self) -> list[int]:
        return [self.pid(f"instance-{n}") for n in (1, 2)]

    def stop_redis(self) -> None:
        pid = self.pid("redis")
        os.kill(pid, signal.SIGTERM)
        wait_for_exit(pid)

    def stop_postgres(self) -> None:
        self._as_postgres("pg_ctl", "-D", str(self.folder / "postgresql"), "-m", "fast", "-w", "stop")

    def _as_postgres(self, *command: str) -> None:
        bin_dirs = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
        program = str(bin_dirs[-1] / command[0]) if bin_dirs else command[0]
        prefix = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        subprocess.run([*prefix, program, *command[1:]], check=True, capture_output=True, timeout=60)

    def log_tails(self, size: int = 3000) -> str:
        logs = sorted((self.folder / "logs").glob("*.log"))
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-size:]}" for log in logs)


def wait_for_exit(pid: int, timeout: float = 40) -> bool:
    """Whether `pid` is gone within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def client(**options) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    return httpx.AsyncClient(timeout=httpx.Timeout(30.0), limits=limits, **options)
