"""Soak: 200,000 mixed requests on one instance of examples/site; its memory must level off.

    .venv/bin/python bench/soak.py [--requests 200000] [--clients 16] [--time-limit 3600]
    .venv/bin/python bench/soak.py --url http://127.0.0.1:8001 --pid 1234 --database postgresql://...

Without `--url` it starts `scripts/cluster` in a folder of its own (PostgreSQL, Redis, nginx, two
instances, all private and on 127.0.0.1), sends every request straight to instance 1, and stops the
cluster at the end. The mix (bench/soak_mix.py) reads, lists with filters, search, relations and pages, writes
(create, update, delete of rows the soak made) and asks for a few errors on purpose: bad tokens
(401), unknown records and objects (404), invalid bodies (422). Each kind has the one status it must
get; any other answer is an unexpected error. Clients present themselves through X-Forwarded-For (the
instance trusts 127.0.0.1 as its proxy), a new address every 100 requests, so the rate limit never
refuses them: the soak measures the instance, not the limiter.

It passes (exit 0) when every request got its expected status and the instance's RSS at the end is
within TOLERANCE of its RSS after the first 10,000 requests; it prints RSS every 10,000 requests, the
rate, latencies and the count of each kind and status. It stops with exit 1 at --time-limit.

With `--freeze-every 60 --freeze-for 7` (CI's soak) the cluster's PostgreSQL is frozen with SIGSTOP
for 7 s every minute (bench/freezes.py): a request under way during a freeze may answer 503, any
other answer — and every answer to a request sent after a thaw — must be the one its kind expects.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

from freezes import Freezer  # bench/ is on sys.path when run as a script
from keepalive_client import KeepAliveClient, Response
from soak_mix import expected_status, schedule, send

REPOSITORY = Path(__file__).resolve().parents[1]
API = "/api/pb/v1"
TOLERANCE = 0.10
BASELINE_AT = 10_000
PER_ADDRESS = 100


@dataclass
class Tally:
    done: int = 0
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    unexpected: Counter[tuple[str, int]] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)  # a few unexpected answers, to show
    frozen: Counter[str] = field(default_factory=Counter)  # 503s of requests under way in a freeze
    latencies: list[float] = field(default_factory=list)
    seconds: Counter[str] = field(default_factory=Counter)  # time spent per kind of request
    rss: list[tuple[int, int, float]] = field(default_factory=list)  # (requests, RSS bytes, elapsed s)


class Soak:
    def __init__(
        self,
        base: str,
        tokens: list[str],
        pid: int,
        total: int,
        clients: int,
        deadline: float,
        freezer: Freezer | None = None,
    ) -> None:
        self.base, self.tokens, self.pid, self.deadline = base, tokens, pid, deadline
        self.freezer = freezer
        self.kinds = iter(schedule(total))
        self.clients = clients
        self.tally = Tally()
        self.started = time.monotonic()
        self.addresses = (
            f"10.{a}.{b}.{c}" for a in itertools.count(1) for b in range(256) for c in range(1, 255)
        )
        self.timed_out = False

    async def run(self) -> Tally:
        stop = asyncio.Event()
        freezes = asyncio.ensure_future(self.freezer.run(stop)) if self.freezer else None
        try:
            await asyncio.gather(*(self.client(number) for number in range(self.clients)))
        finally:
            stop.set()
            if freezes is not None:
                await freezes
        return self.tally

    async def client(self, number: int) -> None:
        mine: deque[int] = deque()  # ids this client created and has not deleted
        async with KeepAliveClient(self.base + API, timeout=30) as http:  # one connection, kept alive
            headers = {"Authorization": f"Bearer {self.tokens[number % len(self.tokens)]}"}
            for count, kind in enumerate(self.kinds):
                if time.monotonic() > self.deadline:
                    self.timed_out = True
                    return
                if count % PER_ADDRESS == 0:
                    headers["X-Forwarded-For"] = next(self.addresses)
                began = time.monotonic()
                response = await send(http, kind, headers, mine, f"{number}-{self.tally.done}")
                self.record(kind, response, began)

    def record(self, kind: str, response: Response, began: float) -> None:
        tally = self.tally
        ended = time.monotonic()
        seconds = ended - began
        expected = expected_status(kind, response)
        tally.statuses[(kind, response.status_code)] += 1
        tally.seconds[kind] += seconds
        if response.status_code == 503 and self.freezer and self.freezer.overlaps(began, ended):
            tally.frozen[kind] += 1  # under way while the database was frozen: 503 is its answer
        elif response.status_code != expected:
            tally.unexpected[(kind, response.status_code)] += 1
            if len(tally.samples) < 5:
                tally.samples.append(
                    f"{kind}: {response.request.method} {response.request.url} → "
                    f"{response.status_code} {response.text[:200]}"
                )
        tally.done += 1
        if tally.done % 10 == 0:
            tally.latencies.append(seconds)
        if tally.done % 10_000 == 0:
            rss = rss_of(self.pid)
            elapsed = time.monotonic() - self.started
            tally.rss.append((tally.done, rss, elapsed))
            print(
                f"{tally.done:>8} requests  RSS {rss / 2**20:7.1f} MB  {tally.done / elapsed:6.0f} req/s  "
                f"unexpected {sum(tally.unexpected.values())}",
                flush=True,
            )


def rss_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds_of(pid: int) -> float:
    # /proc/<pid>/stat: utime and stime, in clock ticks, are the 14th and 15th fields (after the name).
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(tally: Tally, total: int, elapsed: float, timed_out: bool) -> bool:
    print()
    print(
        f"requests  {tally.done} of {total} in {elapsed:.0f} s ({tally.done / max(elapsed, 1e-9):.0f} req/s)"
    )
    if tally.latencies:
        ordered = sorted(tally.latencies)
        p = lambda q: ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000  # noqa: E731
        print(
            f"latency   p50 {p(0.5):.1f} ms  p95 {p(0.95):.1f} ms  p99 {p(0.99):.1f} ms  "
            f"max {ordered[-1] * 1000:.0f} ms  mean {statistics.fmean(ordered) * 1000:.1f} ms"
        )
    counts = Counter(kind for kind, _ in tally.statuses.elements())
    print(
        "mean ms   "
        + ", ".join(f"{kind} {tally.seconds[kind] / counts[kind] * 1000:.1f}" for kind in sorted(counts))
    )
    print(
        "answers   "
        + ", ".join(f"{kind} {status}: {count}" for (kind, status), count in sorted(tally.statuses.items()))
    )
    ok = not timed_out and tally.done == total
    if timed_out:
        print("FAIL: the time limit struck before every request was sent")
    if tally.unexpected:
        ok = False
        print(
            "FAIL: unexpected answers: "
            + ", ".join(
                f"{kind} → {status}: {count}" for (kind, status), count in sorted(tally.unexpected.items())
            )
        )
        for sample in tally.samples:
            print("  " + sample)
    else:
        print("errors    only those the mix asks for (401, 404, 422), each exactly as asked")
    if tally.frozen:
        frozen = sum(tally.frozen.values())
        print(f"freezes   503 for {frozen} requests under way while PostgreSQL was frozen")
    baseline = next((rss for done, rss, _ in tally.rss if done == BASELINE_AT), None)
    if baseline is None or not tally.rss:
        print("FAIL: no RSS after the first 10,000 requests")
        return False
    final = tally.rss[-1][1]
    change = final / baseline - 1
    within = abs(change) <= TOLERANCE
    print(
        f"RSS       {baseline / 2**20:.1f} MB after {BASELINE_AT} requests, {final / 2**20:.1f} MB after "
        f"{tally.rss[-1][0]} ({change:+.1%}; allowed ±{TOLERANCE:.0%}): {'ok' if within else 'FAIL'}"
    )
    return ok and within


# -- the cluster, when no --url is given --------------------------------------------------------------
class OwnCluster:
    """scripts/cluster in a temporary folder; instance 1 is the one soaked."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="pb-soak-"))
        self.env = {**os.environ, "PB_CLUSTER_DIR": str(self.folder), "PB_CLUSTER_PORT": str(free_port())}

    def __enter__(self) -> OwnCluster:
        subprocess.run(
            ["bash", str(REPOSITORY / "scripts" / "cluster"), "start"],
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=180,
        )
        values = dict(line.split("=", 1) for line in (self.folder / "cluster.env").read_text().splitlines())
        self.url = f"http://127.0.0.1:{values['INSTANCE_1_PORT']}"
        self.database = values["PB_DATABASE_URL"].strip("'")
        self.pid = int((self.folder / "instance-1.pid").read_text())
        return self

    def __exit__(self, *_: object) -> None:
        log = self.folder / "logs" / "instance-1.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        if "Traceback" in text:  # the folder goes with the cluster: show what failed first
            print("instance 1 logged:\n" + text[max(0, text.index("Traceback") - 300) :][:6000])
        subprocess.run(
            ["bash", str(REPOSITORY / "scripts" / "cluster"), "stop"],
            env=self.env,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def make_token(database: str, number: int = 0) -> str:
    console = REPOSITORY / ".venv" / "bin" / "pb-headless"
    done = subprocess.run(
        [
            str(console),
            "--database",
            database,
            "token",
            "create",
            "--name",
            f"soak-{os.getpid()}-{int(time.time())}-{number}",
            "--scopes",
            "*",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip().splitlines()[-1]


def soak(
    url: str, pid: int, database: str, args: argparse.Namespace, postgres_data: Path | None = None
) -> bool:
    # A token per client, as apps have: one token may run only two searches at once (docs/hardening.md).
    tokens = [make_token(database, number) for number in range(args.clients)]
    started = time.monotonic()
    freezer = None
    if args.freeze_every:
        if postgres_data is None:
            raise SystemExit("--freeze-every needs the soak's own cluster (no --url)")
        freezer = Freezer(postgres_data, args.freeze_every, args.freeze_for)
    runner = Soak(url, tokens, pid, args.requests, args.clients, started + args.time_limit, freezer)
    print(
        f"soaking {url} (pid {pid}): {args.requests} requests from {args.clients} clients, "
        f"time limit {args.time_limit:.0f} s"
        + (f", PostgreSQL frozen {args.freeze_for:.0f} s every {args.freeze_every:.0f} s" if freezer else ""),
        flush=True,
    )
    cpu_before, own_before = cpu_seconds_of(pid), time.process_time()
    tally = asyncio.run(runner.run())
    passed = report(tally, args.requests, time.monotonic() - started, runner.timed_out)
    if tally.done:
        cpu, own = cpu_seconds_of(pid) - cpu_before, time.process_time() - own_before
        print(f"CPU       the instance: {cpu:.1f} s, {cpu / tally.done * 1e6:.0f} µs a request")
        # The clients run on the instance's cores: what they take, the instance cannot have.
        print(f"CPU       the clients (this process): {own:.1f} s, {own / tally.done * 1e6:.0f} µs a request")
    return passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--time-limit", type=float, default=3600, help="seconds (default 3600)")
    parser.add_argument("--freeze-every", type=float, default=0, help="seconds between freezes (0: none)")
    parser.add_argument("--freeze-for", type=float, default=7, help="seconds one freeze lasts (default 7)")
    parser.add_argument("--url", help="an instance already running (then --pid and --database too)")
    parser.add_argument("--pid", type=int, help="the process id of that instance, for its RSS")
    parser.add_argument("--database", help="its database URL, to make a token")
    args = parser.parse_args()
    if args.requests < BASELINE_AT + 10_000:
        parser.error(f"--requests must be at least {BASELINE_AT + 10_000}")
    if args.url:
        if not (args.pid and args.database):
            parser.error("--url needs --pid and --database")
        return 0 if soak(args.url, args.pid, args.database, args) else 1
    with OwnCluster() as cluster:
        postgres_data = cluster.folder / "postgresql"
        return 0 if soak(cluster.url, cluster.pid, cluster.database, args, postgres_data) else 1


if __name__ == "__main__":
    sys.exit(main())
