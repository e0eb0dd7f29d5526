"""How much a burst of administration sign-ins delays the API's /health on the same process.

    .venv/bin/python bench/login_burst.py [--logins 40] [--probes 200]

Starts examples/site (SQLite, one uvicorn worker) in a temporary folder, then sends `--logins`
sign-ins at once (wrong passwords from many addresses would be locked, so they use the right one)
while probing GET /api/pb/v1/health every 100 ms. Prints the health latency without and during the
burst (median, 95th percentile, max). The password check runs in worker threads, a few at a time,
so the event loop keeps answering. A figure to read, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.browser.site_tour import ADMIN, running_site

# The API allows 120 requests a minute per address (health included): probe gently.
PROBE_EVERY = 0.1
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def probe(url: str, seconds: float) -> list[float]:
    """Health latencies over `seconds`, from a thread of its own so the burst's client never delays it."""
    times = []
    until = time.perf_counter() + seconds
    # A fresh connection per probe, as separate clients would come: the figure is the server's delay.
    with httpx.Client(base_url=url, limits=httpx.Limits(max_keepalive_connections=0), timeout=120) as client:
        while time.perf_counter() < until:
            started = time.perf_counter()
            answer = client.get("/api/pb/v1/health")
            times.append((time.perf_counter() - started) * 1000)
            assert answer.status_code == 200, answer.status_code
            time.sleep(PROBE_EVERY)
    return times


async def sign_in(client: httpx.AsyncClient) -> int:
    form = await client.get("/mgr/login")
    token = CSRF.search(form.text).group(1)  # type: ignore[union-attr]
    data = {"username": ADMIN[0], "password": ADMIN[1], "csrf_token": token}
    return (await client.post("/mgr/login", data=data)).status_code


def summary(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return (f"{label:<22} n={len(times):4d}  median {statistics.median(times):6.1f} ms"
            f"  p95 {p95:6.1f} ms  max {max(times):6.1f} ms")  # fmt: skip


async def burst(url: str, logins: int) -> tuple[list[int], float]:
    # Clients are made first (each builds an SSL context, which takes the CPU for a while).
    clients = [httpx.AsyncClient(base_url=url, timeout=120) for _ in range(logins)]
    started = time.perf_counter()
    statuses = await asyncio.gather(*(sign_in(client) for client in clients))
    took = time.perf_counter() - started
    for client in clients:
        await client.aclose()
    return list(statuses), took


def measure(url: str, logins: int, seconds: float) -> None:
    quiet = probe(url, seconds)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        during = pool.submit(probe, url, seconds)
        statuses, took = asyncio.run(burst(url, logins))
        loaded = during.result()
    print(summary("health, quiet", quiet))
    print(summary(f"health, {logins} sign-ins", loaded))
    print(f"{logins} sign-ins answered {sorted(set(statuses))} in {took:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, running_site(Path(folder) / "site") as site:
        measure(site.url, args.logins, args.seconds)


if __name__ == "__main__":
    main()
