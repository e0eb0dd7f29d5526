"""One table for a run: rps, p50, p99, server CPU µs per request for each system, the ratios, RSS,
the machine's load average, and each target of the benchmark marked met or not."""

from __future__ import annotations

from typing import Any

from bench.load import Request

SYSTEMS = ("pb", "pocketbase", "directus", "floor")
NAMES = {"pb": "pb_headless", "pocketbase": "PocketBase", "directus": "Directus tuned", "floor": "floor"}
READS = ("q1_list", "q2_filter_sort", "q3_search", "q4_show", "q5_offset", "q6_total", "q9_count_none")
FIXED_COST = ("q0_ping", "q4_show")  # CPU per request ≤ 2 × the floor's: the fixed cost of a request
LARGE = ("q6_total", "q2_filter_sort", "q5_offset", "q8_cursor", "q3_search")


def _cells(x: dict[str, Any] | None) -> list[str]:
    if not x:
        return ["–"] * 4
    cpu = x.get("cpu_us_per_request")
    return [
        f"{x['rps']:,.0f}" if x["rps"] >= 100 else f"{x['rps']:.1f}",
        f"{x['lat_p50_us'] / 1000:.1f}",
        f"{x['lat_p99_us'] / 1000:.1f}",
        f"{cpu:,.0f}" if cpu is not None else "–",
    ]


def _ratio(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    if a and b and not b["rps"] and a["rps"]:
        return "∞ (no answer within 10 s)"
    return f"{a['rps'] / b['rps']:.2f}×" if a and b and b["rps"] else "–"


def _cpu(x: dict[str, Any] | None) -> float:
    return (x or {}).get("cpu_us_per_request") or 0.0


def _cpu_ratio(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    return f"{_cpu(a):,.0f} vs {_cpu(b):,.0f} µs, {_cpu(a) / _cpu(b):.2f}×" if _cpu(a) and _cpu(b) else "–"


def table(results: dict[str, dict[str, dict[str, Any]]], reqs: list[Request], meta: dict[str, Any]) -> str:
    systems = [s for s in SYSTEMS if s in results]
    names = NAMES
    head = ["request"]
    for system in systems:
        head += [f"{names[system]} rps", "p50 ms", "p99 ms", "CPU µs/req"]
    head += [f"pb/{names[s]}" for s in systems if s != "pb"] + ["load avg (pb run)"]
    lines = [
        f"{meta['database']}, {meta['rows']:,} rows; wrk -t{meta['threads']} -c{meta['connections']} "
        f"-d{meta['duration']}s over loopback, one server at a time; pb_headless on {meta['server']} with "
        f"{meta['workers']} worker(s), floor with {meta['floor_workers']}, PocketBase as one process; "
        f"{meta['cores']} cores; "
        + (f"MariaDB through {meta['driver']}; " if meta.get("driver") else "")
        + ("pb's lists each asked anew (--fresh: every one reads its page); " if meta.get("fresh") else "")
        + f"started {meta['started']} UTC",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for request in reqs:
        row = [request.title]
        for system in systems:
            row += _cells(results[system].get(request.label))
        pb = results.get("pb", {}).get(request.label)
        row += [_ratio(pb, results[s].get(request.label)) for s in systems if s != "pb"]
        row.append(pb["load_average"] if pb else "–")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for system in systems:
        runs = list(results[system].values())
        if runs:
            rss = max(r["rss_kib"] for r in runs) / 1024
            peak = max(r["rss_peak_kib"] for r in runs) / 1024
            loads = [float(r["load_average"].split()[0]) for r in runs]
            lines.append(
                f"- {names[system]}: RSS of the largest process after a run {rss:.0f} MiB, "
                f"peak {peak:.0f} MiB; 1-minute load average during its runs "
                f"{min(loads):.1f}–{max(loads):.1f}"
            )
    lines += ["", "Targets:", "", *targets(results, meta)]
    return "\n".join(lines) + "\n"


def targets(results: dict[str, dict[str, dict[str, Any]]], meta: dict[str, Any]) -> list[str]:
    pb, pocketbase, directus, floor = (results.get(s, {}) for s in SYSTEMS)
    out: list[str] = []

    def mark(ok: bool | None, text: str) -> None:
        out.append(f"- [{'met' if ok else 'NOT met' if ok is not None else 'not measured'}] {text}")

    if meta["database"] == "sqlite":
        for label in READS:
            a, b, c = pb.get(label), pocketbase.get(label), directus.get(label)
            mark(
                a["rps"] >= 1.5 * b["rps"] if a and b else None,
                f"{label}: rps ≥ 1.5 × PocketBase ({_ratio(a, b)})",
            )
            mark(
                a["rps"] >= 3 * c["rps"] if a and c else None,
                f"{label}: rps ≥ 3 × Directus tuned ({_ratio(a, c)})",
            )
    for label in FIXED_COST:
        a, b = pb.get(label), floor.get(label)
        mark(
            _cpu(a) <= 2 * _cpu(b) if _cpu(a) and _cpu(b) else None,
            f"{label}: CPU ≤ 2 × floor's ({_cpu_ratio(a, b)})",
        )
    a, b = pb.get("q1_list"), floor.get("q9_count_none") or floor.get("q1_list")
    mark(
        _cpu(a) <= 2.5 * _cpu(b) if _cpu(a) and _cpu(b) else None,
        f"q1_list: CPU ≤ 2.5 × the floor's list without a count ({_cpu_ratio(a, b)})",
    )
    a, b = pb.get("q7_not_modified"), pb.get("q1_list")
    mark(
        _cpu(a) <= 0.5 * _cpu(b) if _cpu(a) and _cpu(b) else None,
        f"q7_not_modified: a 304 costs ≤ 0.5 × the CPU of the 200 it replaces ({_cpu_ratio(a, b)})",
    )
    for label, x in pb.items():
        mark(
            x["requests"] > 0 and x["lat_p99_us"] <= 3 * x["lat_p50_us"],
            f"{label}: p99 ≤ 3 × p50 ({x['lat_p99_us'] / 1000:.1f} vs {x['lat_p50_us'] / 1000:.1f} ms)",
        )
    if pb:
        rss = max(x["rss_peak_kib"] for x in pb.values()) / 1024
        mark(rss <= 100, f"RSS per worker under load ≤ 100 MiB ({rss:.0f} MiB peak)")
    if meta["rows"] >= 1_000_000:
        for label in LARGE:
            x = pb.get(label)
            mark(
                x["lat_p50_us"] <= 10_000 and not x["err_status"] and not x["err_timeout"] if x else None,
                f"{meta['rows']:,} rows, {label}: p50 ≤ 10 ms, no answer but 200"
                + (
                    f" ({x['lat_p50_us'] / 1000:.1f} ms, {x['err_status']} non-2xx, "
                    f"{x['err_timeout']} timeouts)"
                    if x
                    else ""
                ),
            )
    return out


def main(directory: str) -> None:
    """Rebuild a run's table from its figures: python -m bench.report /tmp/pb-bench/results/<run>."""
    import json
    from pathlib import Path

    from bench.dataset import Expected
    from bench.load import requests

    folder = Path(directory)
    meta = json.loads((folder / "meta.json").read_text())
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.q*.json")):
        system, label = path.name.split(".")[:2]
        results.setdefault(system, {})[label] = json.loads(path.read_text())
    reqs = requests(Expected(meta["rows"], 0, 0, min(12345, meta["rows"])))
    text = table({s: results[s] for s in SYSTEMS if s in results}, reqs, meta)
    (folder / "results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    import sys

    main(sys.argv[1])


def writes_table(results: dict[str, dict[str, dict[str, Any]]], meta: dict[str, Any]) -> str:
    """The writes (bench/writes.py): rps, p50, p99 and server CPU per request of each system, the ratios
    to PocketBase and to the floor, and the target (on SQLite, each write ≥ 1.5 × PocketBase's rps)."""
    from bench.writes import LABELS, TITLES

    systems = [s for s in ("pb", "pocketbase", "floor") if s in results]
    head = ["write"]
    for system in systems:
        head += [f"{NAMES[system]} rps", "p50 ms", "p99 ms", "CPU µs/req"]
    head += [f"pb/{NAMES[s]} rps" for s in systems if s != "pb"]
    head += ["pb CPU / floor CPU" if "floor" in systems else "", "load avg (pb run)"]
    head = [cell for cell in head if cell]
    lines = [
        f"Writes, {meta['database']}, {meta['rows']:,} rows; wrk -t{meta['threads']} -c{meta['connections']} "
        f"-d{meta['duration']}s, every request on a distinct id; pb_headless with its change log on",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    pb = results.get("pb", {})
    for label in LABELS:
        if not any(label in results[s] for s in systems):
            continue
        row = [TITLES[label]]
        for system in systems:
            row += _cells(results[system].get(label))
        row += [_ratio(pb.get(label), results[s].get(label)) for s in systems if s != "pb"]
        if "floor" in systems:
            a, b = pb.get(label), results["floor"].get(label)
            row.append(f"{_cpu(a) / _cpu(b):.2f}×" if _cpu(a) and _cpu(b) else "–")
        row.append(pb[label]["load_average"] if label in pb else "–")
        lines.append("| " + " | ".join(row) + " |")
    errors = [
        f"{NAMES[s]} {label}: {x['err_status']} non-2xx, {x['err_timeout']} timeouts"
        for s in systems
        for label, x in results[s].items()
        if x["err_status"] or x["err_timeout"]
    ]
    lines += ["", *(f"- !! {line}" for line in errors)]
    if meta["database"] == "sqlite":
        lines += ["Targets:", ""]
        for label in LABELS:
            a, b = pb.get(label), results.get("pocketbase", {}).get(label)
            ok = a["rps"] >= 1.5 * b["rps"] if a and b else None
            state = "met" if ok else "NOT met" if ok is not None else "not measured"
            lines.append(f"- [{state}] {label}: rps ≥ 1.5 × PocketBase ({_ratio(a, b)})")
    return "\n".join(lines) + "\n"
