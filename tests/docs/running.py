"""Running a page's examples: its commands in bash, its requests with httpx, its servers in the background.

A page runs as a reader runs it: in a folder of its own, on a fresh site of its own, in a clean shell
that has only what a new terminal has (PATH with the suite's Python first, HOME, ...) plus what the
page itself exports. Commands keep their exported variables and working directory from one block to
the next (as in one terminal); every port the page names becomes a free port of its own, and the
example site's database becomes the page's (see docs/writing-docs.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.docs.pages import REPOSITORY, Block
from tests.support.server import free_port, log_tail

SITE_PORT = 8000  # where `bash scripts/site` serves, unless PORT says otherwise
ADDRESS = re.compile(r"\b(?P<host>127\.0\.0\.1|localhost):(?P<port>\d{4,5})\b")
PORT_OPTION = re.compile(r"(?P<option>--port[ =]|\bPORT=)(?P<port>\d{4,5})\b")
SITE_SCRIPT = "bash scripts/site"
FRESH_SHELL = ("HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TERM", "TMPDIR")
DOCS_DATABASE = "sqlite:///examples/site/site.db"
CLONE = "/path/to/pb_headless"
SESSION = Path(__file__).with_name("session.py")
COMMAND_SECONDS = 600  # `pip install` into a new venv is the slowest command the docs show
START_SECONDS = 60
TOKEN = re.compile(r"\bpb_[0-9A-Za-z]{46}\b")


@dataclass
class PageRun:
    """One page's terminal: a folder, its ports, a database, the variables its commands exported."""

    folder: Path
    cwd: Path = REPOSITORY
    ports: dict[int, int] = field(default_factory=dict)  # the port a page names -> this run's
    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    site_database: str = ""  # the example site's database URL, when the page runs against it
    session: subprocess.Popen[str] | None = None  # the page's Python session (tests/docs/session.py)

    def __post_init__(self) -> None:
        self.state.touch()

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.folder / 'site.db'}"

    @property
    def state(self) -> Path:
        return self.folder / "terminal.sh"

    def port(self, documented: int) -> int:
        if documented not in self.ports:
            self.ports[documented] = free_port()
        return self.ports[documented]

    def substitute(self, text: str) -> str:
        """The docs' ports, site and database in a command become this run's."""
        text = ADDRESS.sub(lambda found: f"{found['host']}:{self.port(int(found['port']))}", text)
        text = PORT_OPTION.sub(lambda found: f"{found['option']}{self.port(int(found['port']))}", text)
        site = f"env PB_DATABASE_URL={self.database_url} PORT={self.port(SITE_PORT)} {SITE_SCRIPT}"
        return (
            text.replace(SITE_SCRIPT, site)
            .replace(DOCS_DATABASE, self.database_url)
            .replace(CLONE, str(REPOSITORY))
        )

    def as_documented(self, printed: str) -> str:
        """This run's ports, database and clone in printed output become the docs' again."""
        for documented, port in self.ports.items():
            printed = re.sub(rf"(127\.0\.0\.1|localhost):{port}\b", rf"\g<1>:{documented}", printed)
        return printed.replace(self.database_url, DOCS_DATABASE).replace(str(REPOSITORY), CLONE)

    def environment(self, **variables: str) -> None:
        """Export variables into the page's terminal."""
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
        """Start a server block in the background and wait until it answers on the port it names."""
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
        named = PORT_OPTION.search(block.body)
        port = self.port(int(named["port"]) if named else SITE_PORT)
        wait_for(server, log, f"http://127.0.0.1:{port}{health}")
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
            f"http://127.0.0.1:{self.port(SITE_PORT)}{path}",
            headers=headers,
            content=body.strip().encode() or None,
            timeout=30,
        )
        if answer.status_code >= 500:
            raise AssertionError(f"{block.where}: answered {answer.status_code}: {answer.text}")
        return self.as_documented(answer.text)

    def execute(self, block: Block) -> str:
        """Run a Python fragment in the page's session; what it printed, or AssertionError naming it."""
        if self.session is None:
            self.session = self._start_session()
        assert self.session.stdin is not None and self.session.stdout is not None
        code = self.substitute(textwrap.dedent(block.body))
        fragment = {"where": block.where, "code": code, "environ": self.variables()}
        self.session.stdin.write(json.dumps(fragment) + "\n")
        self.session.stdin.flush()
        ready, _, _ = select.select([self.session.stdout], [], [], COMMAND_SECONDS)
        line = self.session.stdout.readline() if ready else ""
        if not line:
            raise AssertionError(
                f"{block.where}: no answer from the Python session:\n{log_tail(self._session_log)}"
            )
        answer = json.loads(line)
        if answer["error"]:
            raise AssertionError(f"{block.where}: raised\n{block.body}--- traceback ---\n{answer['error']}")
        return self.as_documented(answer["printed"])

    @property
    def _session_log(self) -> Path:
        return self.folder / "python-session.log"

    def _start_session(self) -> subprocess.Popen[str]:
        """`python` in the page's terminal as it is now: its folder and its exported variables."""
        terminal = self.variables()
        with self._session_log.open("a") as log:
            return subprocess.Popen(
                [sys.executable, str(SESSION), str(REPOSITORY), self.site_database],
                cwd=terminal.get("PWD", self.cwd),
                env=terminal,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )

    def variables(self) -> dict[str, str]:
        listing = subprocess.run(
            ["bash", "-c", f"cd {shlex.quote(str(self.cwd))}; . {shlex.quote(str(self.state))}; env -0"],
            capture_output=True,
            text=True,
            env=self._base_env(),
            check=True,
        )
        return dict(item.split("=", 1) for item in listing.stdout.split("\0") if "=" in item)

    def stop(self) -> None:
        if self.session is not None:
            assert self.session.stdin is not None
            self.session.stdin.close()
            try:
                self.session.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.session.kill()
                self.session.wait(timeout=10)
            self.session = None
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
        """What a new terminal has, with the suite's Python first on PATH (a reader who activated the
        venv) and nothing else: no variable of the suite's reaches a page, so a page that needs one
        sets it itself, and one that installs pb_headless into a venv of its own runs what it installed."""
        python_bin = str(Path(sys.executable).parent)
        fresh = {name: os.environ[name] for name in FRESH_SHELL if name in os.environ}
        return {**fresh, "PATH": f"{python_bin}:{os.environ.get('PATH', '')}", "PYTHONUNBUFFERED": "1"}


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
    try:
        yield run
    finally:
        run.stop()


def start_example_site(run: PageRun) -> None:
    """What `bash scripts/site` does, on this run's port and a new database: `quickstart`. The site runs
    beside the page (a reader's other terminal); only the token it prints reaches the page, as $TOKEN."""
    block = Block(
        REPOSITORY / "scripts" / "site",
        7,
        "bash",
        f"env PB_DATABASE_URL={run.database_url} {shlex.quote(sys.executable)} -m examples.site quickstart"
        f" --host 127.0.0.1 --port {SITE_PORT}\n",
    )
    run.start(block)
    run.site_database = run.database_url
    assert "TOKEN=" in run.state.read_text(), "quickstart printed no token"
