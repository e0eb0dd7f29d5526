"""The six requests (plus the HTTP floor), pb's three of conditional requests, cursors and count
control, the check of every answer, and one wrk run per request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.dataset import Expected
from bench.servers import CLK_TCK, System

HERE = Path(__file__).resolve().parent
COLD_RETRIES = 5  # a 503 on the check before a run is asked again this often
COLD_WAIT = 3.0  # seconds between two asks


@dataclass(frozen=True)
class Request:
    label: str
    title: str
    authorized: bool = True
    pb_only: bool = False  # a feature the peers do not have: measured on pb alone


def requests(expected: Expected) -> list[Request]:
    offset = expected.rows * 9 // 10
    return [
        Request("q0_ping", "0. ping (pb /health runs SELECT 1)", authorized=False),
        Request("q1_list", "1. list limit=20"),
        Request("q2_filter_sort", "2. filter category=c7, sort -published_at"),
        Request("q3_search", "3. search=lorem"),
        Request("q4_show", f"4. show record {expected.record_id}"),
        Request("q5_offset", f"5. offset={offset}"),
        Request("q6_total", "6. list with total count"),
        Request("q7_not_modified", "7. list revalidated: If-None-Match → 304", pb_only=True),
        Request("q8_cursor", f"8. cursor page after row {offset}", pb_only=True),
        Request("q9_count_none", "9. list without a count (pb count=none)"),
    ]


def path_of(system: System, label: str, expected: Expected) -> str:
    """The request's address on this system (pb's filter/sort/search syntax, PocketBase's, or Directus')."""
    if system.name == "pocketbase":
        from bench import pocketbase

        return pocketbase.path_of(label, expected.rows, expected.record_id)
    listing = system.prefix + system.list_path
    pb = system.name == "pb"
    offset = expected.rows * 9 // 10
    return {
        "q0_ping": system.ping,
        "q1_list": f"{listing}?limit=20",
        "q2_filter_sort": f"{listing}?"
        + (
            "filter[category]=c7&sort=-published_at&limit=20"
            if pb
            else "filter[category][_eq]=c7&sort=-published_at&limit=20"
        ),
        "q3_search": f"{listing}?search=lorem&limit=20",
        "q4_show": f"{system.prefix}{system.record_path}{expected.record_id}",
        "q5_offset": f"{listing}?limit=20&offset={offset}",
        "q6_total": f"{listing}?limit=20" + ("" if pb else "&meta=total_count"),
        "q7_not_modified": f"{listing}?limit=20",
        "q8_cursor": f"{listing}?limit=20",  # the cursor is added by `prepared` (it is read first)
        "q9_count_none": f"{listing}?limit=20" + ("&count=none" if pb else ""),
    }[label]


def prepared(label: str, url: str, token: str, expected: Expected) -> tuple[str, dict[str, str]]:
    """The address and extra headers of a request that needs a value read from pb first: the list's
    ETag (q7), the cursor of row `offset` (q8)."""
    headers = {"Authorization": f"Bearer {token}"}  # pb alone serves these
    if label == "q7_not_modified":
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as response:
            return url, {"If-None-Match": response.headers["ETag"]}
    if label == "q8_cursor":
        offset = expected.rows * 9 // 10
        _, body = fetch(f"{url.replace('limit=20', 'limit=1')}&offset={offset - 1}", headers["Authorization"])
        return f"{url}&after={body['meta']['next_cursor']}", {}
    return url, {}


def fetch(url: str, authorization: str | None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    sent = {"Authorization": authorization} if authorization else {}
    request = urllib.request.Request(url, headers={**sent, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            body = response.read()
            return response.status, json.loads(body) if body[:1] in (b"{", b"[") else body
    except urllib.error.HTTPError as error:
        return error.code, error.read()[:300]


# Requests pb_headless limits per token (searches: a few running at once per token and process,
# docs/hardening.md): measured with a token per client (bench/wrk_requests.lua), as 16 clients send them.
PER_CLIENT = ("q3_search",)
# The lists `bench/run --fresh` asks anew on every request (bench/wrk_requests.lua): all but the 304,
# whose If-None-Match names one list's tag.
LISTS = ("q1_list", "q2_filter_sort", "q3_search", "q5_offset", "q6_total", "q8_cursor", "q9_count_none")


def check(
    system: System,
    label: str,
    url: str,
    token: str,
    expected: Expected,
    headers: dict[str, str] | None = None,
) -> None:
    """Status 200, the right rows, the right total: a fast wrong answer is not a result."""
    if label == "q7_not_modified":
        status, body = fetch(url, system.authorization(token), headers)
        if status != 304:
            raise AssertionError(f"{system.name} {label} {url}: HTTP {status}, not 304")
        return
    status, body = fetch(url, system.authorization(token) if label != "q0_ping" else None)
    for _ in range(COLD_RETRIES):
        # A first request that did not finish in the database's time (pb_headless noting the keys of
        # a deep page on a busy machine; the noting goes on without it): say so, and ask again.
        if status != 503:
            break
        print(
            f"  {system.name} {label}: 503 on a cold request, asking again in {COLD_WAIT:g} s",
            file=sys.stderr,
        )
        time.sleep(COLD_WAIT)
        status, body = fetch(url, system.authorization(token) if label != "q0_ping" else None)
    problems = [] if status == 200 else [f"HTTP {status}: {body!r}"]
    if status == 200 and system.name == "pocketbase" and label != "q0_ping":
        from bench import pocketbase

        body = pocketbase.as_envelope(label, body)
    if status == 200 and label != "q0_ping":
        problems += _problems(system, label, body, expected)
    if problems:
        raise AssertionError(f"{system.name} {label} {url}: " + "; ".join(problems))


def _problems(system: System, label: str, body: Any, expected: Expected) -> list[str]:
    data = body.get("data")
    if label == "q4_show":
        return [] if isinstance(data, dict) and data.get("id") == expected.record_id else [f"record {data!r}"]
    out = [] if isinstance(data, list) and len(data) == 20 else [f"{len(data or [])} rows, not 20"]
    if label == "q2_filter_sort" and data:
        if any(row["category"] != "c7" for row in data):
            out.append("a row outside category c7")
        stamps = [row["published_at"] for row in data]
        if stamps != sorted(stamps, reverse=True):
            out.append("not sorted by published_at descending")
    if (
        label == "q3_search"
        and data
        and not all("lorem" in (row["title"] + row["body"] + row["category"]).lower() for row in data)
    ):
        out.append("a row without 'lorem'")
    if label in ("q5_offset", "q8_cursor") and data and data[0]["id"] != expected.rows * 9 // 10 + 1:
        out.append(f"first id {data[0]['id']}")
    want_total = {
        "q1_list": expected.rows,
        "q2_filter_sort": expected.category_c7,
        "q3_search": expected.search_lorem,
        "q5_offset": expected.rows,
        "q6_total": expected.rows,
        "q8_cursor": expected.rows,
        "q9_count_none": None,  # a count-less list says no total
    }
    if system.name in ("pb", "pocketbase"):
        meta = body.get("meta", {})
        total = meta.get("total")
        if system.name == "pb" and label == "q3_search" and meta.get("total_estimated") is True:
            # A search's count past its cap or budget is an estimate, flagged (docs/query.md, "count"):
            # right when it is no less than the rows known to exist.
            if not isinstance(total, int) or total < len(data) + bool(meta.get("has_more")):
                out.append(f"meta.total {total}, an estimate below the rows read")
            else:
                exact = want_total[label]
                print(f"  pb {label}: meta.total {total} is an estimate (exact: {exact})", file=sys.stderr)
        elif total != want_total[label]:
            out.append(f"meta.total {total}, expected {want_total[label]}")
    elif label == "q6_total":
        total = body.get("meta", {}).get("total_count")
        if total != expected.rows:
            out.append(f"total_count {total}, expected {expected.rows}")
    return out


@dataclass(frozen=True)
class Load:
    threads: int = 2
    connections: int = 16
    duration: int = 15
    warmup: int = 3
    drain: float = 2.0


def measure(
    system: System,
    label: str,
    url: str,
    token: str | None,
    load: Load,
    out: Path,
    extra: dict[str, str] | None = None,
    tokens: list[str] | None = None,
    fresh: bool = False,
) -> dict[str, Any]:
    """A warm-up, then the measured wrk run with the server's CPU time and the machine's load around it.
    `tokens`: each request carries the next of them (bench/wrk_requests.lua), as that many clients.
    `fresh`: each request asks another list (an ignored parameter with a counter), so none is a kept
    answer."""
    headers = ["-H", f"Authorization: {system.authorization(token)}"] if token and not tokens else []
    for name, value in (extra or {}).items():
        headers += ["-H", f"{name}: {value}"]
    base = [
        "wrk",
        f"-t{load.threads}",
        f"-c{load.connections}",
        "--timeout",
        "10s",
        "-s",
        str(HERE / ("wrk_requests.lua" if tokens or fresh else "wrk_report.lua")),
        *headers,
        url,
    ]
    env = {**os.environ, "WRK_OUT": "/dev/null", "WRK_REPORT": str(HERE / "wrk_report.lua")}
    if tokens:
        env["WRK_TOKENS"] = ",".join(system.authorization(each) for each in tokens)
    if fresh:
        env["WRK_FRESH"] = "1"
    subprocess.run(
        [*base[:3], f"-d{load.warmup}s", *base[3:]],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=load.warmup + 60,
    )
    time.sleep(load.drain)
    result_file = out / f"{system.name}.{label}.json"
    load_average = machine_load()
    ticks = system.cpu_ticks()
    started = time.monotonic()
    subprocess.run(
        [*base[:3], f"-d{load.duration}s", "--latency", *base[3:]],
        env={**env, "WRK_OUT": str(result_file)},
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=load.duration + 60,
    )
    elapsed = time.monotonic() - started
    ticks = system.cpu_ticks() - ticks
    result = json.loads(result_file.read_text())
    return with_server_figures(result, result_file, system, label, url, load_average, ticks, elapsed)


def with_server_figures(
    result: dict[str, Any],
    result_file: Path,
    system: System,
    label: str,
    url: str,
    load_average: str,
    ticks: int,
    elapsed: float,
) -> dict[str, Any]:
    """wrk's result with the server's CPU per request, its share of the run and its RSS, kept in its file."""
    result.update(
        label=label,
        system=system.name,
        url=url,
        load_average=load_average,
        cpu_us_per_request=(ticks / CLK_TCK * 1e6 / result["requests"]) if result["requests"] else None,
        server_cpu_pct=round(100 * ticks / CLK_TCK / elapsed, 1),
        rss_kib=system.rss_kib(),
        rss_peak_kib=system.rss_kib("VmHWM"),
    )
    result_file.write_text(json.dumps(result))
    return result


def print_result(system: str, label: str, result: dict[str, Any], *, rss: bool) -> None:
    """One line of a wrk run's figures on stderr, and a warning line when any answer was not a 2xx."""
    memory = f"rss {result['rss_kib'] / 1024:4.0f} MiB  " if rss else ""
    print(
        f"  {system:10s} {label:15s} {result['rps']:9.1f} rps  "
        f"p50 {result['lat_p50_us'] / 1000:7.2f} ms  p99 {result['lat_p99_us'] / 1000:7.2f} ms  "
        f"cpu {result['cpu_us_per_request'] or 0:9.0f} µs/req  {memory}"
        f"non-2xx {result['err_status']}  load {result['load_average']}",
        file=sys.stderr,
    )
    if result["err_status"] or result["err_timeout"]:
        print(f"  !! {result['err_status']} non-2xx, {result['err_timeout']} timeouts", file=sys.stderr)


def machine_load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
