"""Running a page's examples: its commands in bash, its requests with httpx, its servers in the background.

A page runs in a folder of its own. Commands keep their exported variables and working directory from
one block to the next (as in one terminal), and the addresses the docs use are replaced by the test's
(see docs/writing-docs.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.docs.pages import REPOSITORY, Block
from tests.support.server import free_port, log_tail

DOCS_ADDRESS = "127.0.0.1:8000"
DOCS_DATABASE = "sqlite:///examples/site/site.db"
CLONE = "/path/to/pb_headless"
COMMAND_SECONDS = 600  # `pip install` into a new venv is the slowest command the docs show
START_SECONDS = 60
TOKEN = re.compile(r"\bpb_[0-9A-Za-z]{46}\b")


@dataclass
class PageRun:
    """One page's terminal: a folder, a port, a database, the variables its commands exported."""

    folder: Path
    port: int = field(default_factory=free_port)
    cwd: Path = REPOSITORY
    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.folder / 'site.db'}"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def state(self) -> Path:
        return self.folder / "terminal.sh"

    def substitute(self, text: str) -> str:
        """The docs' addresses in a command become this run's."""
        return (
            text.replace(DOCS_ADDRESS, self.address)
            .replace("--port 8000", f"--port {self.port}")
            .replace(DOCS_DATABASE, self.database_url)
            .replace(CLONE, str(REPOSITORY))
        )

    def as_documented(self, printed: str) -> str:
        """This run's addresses in printed output become the docs' again."""
        return (
            printed.replace(self.address, DOCS_ADDRESS)
            .replace(self.database_url, DOCS_DATABASE)
            .replace(str(REPOSITORY), CLONE)
        )

    def environment(self, **variables: str) -> None:
        """Export variables into the page's terminal (the first call starts it)."""
        lines = [f"export {name}={shlex.quote(value)}" for name, value in variables.items()]
        with self.state.open("a") as state:
            state.write("\n".join(lines) + "\n")

    def script(self, body: str) -> str:
        return "\n".join(
            [
                f"cd {shlex.quote(str(self.cwd))}",
                f". {shlex.quote(str(self.state))}",
                # On exit, whatever happened: the exported variables (not read-only ones) and the directory.
                f'trap \'{{ export -p | grep -v "^declare -[a-zA-Z]*r"; printf "cd %q\\n" "$PWD"; }}'
                f" > {shlex.quote(str(self.state))}.new' EXIT",
                "set -eo pipefail",
                self.substitute(body),
            ]
        )

    def run(self, block: Block) -> str:
        """Run a command block; its standard output, or AssertionError naming the block."""
        done = subprocess.run(
            ["bash", "-c", self.script(block.body)],
            capture_output=True,
            text=True,
            env=self._base_env(),
            timeout=COMMAND_SECONDS,
            check=False,
        )
        self._keep_state()
        if done.returncode != 0:
            raise AssertionError(
                f"{block.where}: exited with {done.returncode}\n{block.body}"
                f"--- stdout ---\n{done.stdout}--- stderr ---\n{done.stderr}"
            )
        return self.as_documented(done.stdout)

    def start(self, block: Block, health: str = "/api/pb/v1/health") -> None:
        """Start a server block in the background and wait until it answers on this run's port."""
        log = self.folder / f"server-{block.line}.log"
        with log.open("ab") as output:
            server = subprocess.Popen(
                ["bash", "-c", self.script("exec " + block.body.strip())],
                env=self._base_env(),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.servers.append(server)
        wait_for(server, log, f"http://{self.address}{health}")
        printed = TOKEN.findall(log.read_text())
        if printed:  # a server that prints a token (`bash scripts/site`) hands it on as $TOKEN
            self.environment(TOKEN=printed[-1])

    def request(self, block: Block) -> str:
        """Send an `http` block (request line, headers, blank line, body); the answer's body."""
        head, _, body = self.substitute(block.body).partition("\n\n")
        request_line, *header_lines = head.strip().split("\n")
        method, path = request_line.split()[:2]
        values = self.variables()
        headers = dict(line.split(": ", 1) for line in header_lines)
        headers = {
            name: re.sub(r"\$(\w+)", lambda found: values.get(found[1], found[0]), value)
            for name, value in headers.items()
        }
        answer = httpx.request(
            method,
            f"http://{self.address}{path}",
            headers=headers,
            content=body.strip().encode() or None,
            timeout=30,
        )
        if answer.status_code >= 500:
            raise AssertionError(f"{block.where}: answered {answer.status_code}: {answer.text}")
        return self.as_documented(answer.text)

    def variables(self) -> dict[str, str]:
        listing = subprocess.run(
            ["bash", "-c", f". {shlex.quote(str(self.state))}; env -0"],
            capture_output=True,
            text=True,
            env=self._base_env(),
            check=True,
        )
        return dict(item.split("=", 1) for item in listing.stdout.split("\0") if "=" in item)

    def stop(self) -> None:
        for server in self.servers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
        self.servers.clear()

    def _keep_state(self) -> None:
        new = self.state.with_name(self.state.name + ".new")
        if new.exists():
            new.replace(self.state)

    def _base_env(self) -> dict[str, str]:
        """The suite's environment, with its Python first on PATH; nothing points Python at the clone, so
        a page that installs pb_headless into a venv of its own runs what it installed."""
        python_bin = str(Path(sys.executable).parent)
        inherited = {
            name: value
            for name, value in os.environ.items()
            if name not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        }
        return {**inherited, "PATH": f"{python_bin}:{os.environ.get('PATH', '')}", "PYTHONUNBUFFERED": "1"}


def wait_for(server: subprocess.Popen[bytes], log: Path, url: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"the server exited with {server.returncode}:\n{log_tail(log)}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"the server did not answer {url} within {START_SECONDS} s:\n{log_tail(log)}")


@contextlib.contextmanager
def page_run(folder: Path) -> Iterator[PageRun]:
    run = PageRun(folder)
    run.environment(PB_DATABASE_URL=run.database_url, PORT=str(run.port), HOST="127.0.0.1")
    try:
        yield run
    finally:
        run.stop()


def start_example_site(run: PageRun) -> None:
    """What `bash scripts/site` does, on this run's port and database: `quickstart`; its token is $TOKEN."""
    block = Block(
        REPOSITORY / "scripts" / "site",
        7,
        "bash",
        f"{shlex.quote(sys.executable)} -m examples.site quickstart --host 127.0.0.1 --port 8000\n",
    )
    run.start(block)
    assert "TOKEN=" in run.state.read_text(), "quickstart printed no token"
