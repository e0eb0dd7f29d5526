"""A PostgreSQL of the test's own (initdb + pg_ctl in a temp dir, on a free port), which the test may
freeze with SIGSTOP or make hang on COMMIT without touching the server other tests share.

PostgreSQL refuses to run as root, so the server runs as the `postgres` OS user when the tests run
as root. Without the binaries the test is skipped with the reason (failed with PB_REQUIRE_SERVICES=1).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from tests.support.server import free_port

NOBODY = "pb_standby_that_does_not_exist"


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


class PrivatePostgres:
    def __init__(self, folder: Path, bin_dir: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.bin = bin_dir
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.folder / "log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def stop(self) -> None:
        self.thaw()
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)

    def freeze(self) -> None:
        """SIGSTOP the postmaster and every backend: connections and queries hang, nothing fails.
        The postmaster first, so that no backend is forked after the list of them was read."""
        postmaster = self._pids()[0]
        os.kill(postmaster, signal.SIGSTOP)
        for pid in self._pids()[1:]:
            with contextlib.suppress(ProcessLookupError):  # a backend that just ended
                os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self._pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    async def hang_commits(self, hang: bool) -> None:
        """Make every COMMIT wait for a synchronous standby that does not exist, or stop that."""
        connection = await asyncpg.connect(self.url)
        try:
            if hang:
                await connection.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{NOBODY}'")
            else:
                await connection.execute("ALTER SYSTEM RESET synchronous_standby_names")
            await connection.execute("SELECT pg_reload_conf()")
        finally:
            await connection.close()

    async def query(self, sql: str) -> list[asyncpg.Record]:
        connection = await asyncpg.connect(self.url)
        try:
            return await connection.fetch(sql)
        finally:
            await connection.close()

    def _pids(self) -> list[int]:
        pid_file = self.data / "postmaster.pid"
        if not pid_file.exists():
            return []
        postmaster = int(pid_file.read_text().split()[0])
        children = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(postmaster)], capture_output=True, text=True, check=False
        ).stdout.split()
        return [postmaster, *(int(pid) for pid in children)]

    def _run(self, program: str, *args: str, check: bool = True) -> None:
        command = [str(self.bin / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
        if check and result.returncode != 0:
            raise RuntimeError(f"{program} failed: {result.stdout}{result.stderr}")


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    bin_dir = _binaries()
    if bin_dir is None:
        reason = "the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are not installed"
        if os.environ.get("PB_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{reason} (PB_REQUIRE_SERVICES=1 makes them required)")
        pytest.skip(reason)
    folder = Path(tempfile.mkdtemp(prefix="pb-private-pg-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    server = PrivatePostgres(folder, bin_dir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
