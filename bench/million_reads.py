"""CPU per request, in one process, of the reads the million-row targets name, on the database a
`bash bench/run --rows 1000000` run built (its `prepared.json`): the list with its total, filter +
sort, search, `offset=900000`, the cursor page at row 900,000.

    .venv/bin/python -m bench.million_reads --work /tmp/pb-bench/postgresql-1000000 [--times 400] [--fresh]

Each request goes straight into the benchmark's host (bench/host.py, as bench/protocol.py sends
them), one at a time, in rounds of 50 taken in turn; the figure is the process's CPU per request
(the library's work and the driver's, not the database server's), with the median wall time beside
it. On a machine shared with other work, read the CPU column. The same list asked again is a kept
answer (docs/caching.md); `--fresh` makes every request another list, so each reads its page.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import cast

from starlette.applications import Starlette

from bench.host import create_app
from bench.protocol import LIST, call, report
from bench.servers import served_url


async def run(work: Path, times: int, fresh: bool) -> None:
    prepared = json.loads((work / "prepared.json").read_text())
    url, rows = served_url(prepared["pb_url"]), prepared["expected"]["rows"]
    app = create_app(url)
    site = cast(Starlette, app.app)  # CORSMiddleware → the site, whose lifespan starts the API
    async with site.router.lifespan_context(site):
        auth = {"Authorization": f"Bearer {prepared['pb_token']}", "Host": "127.0.0.1:8000"}
        deep_at = rows * 9 // 10
        for _ in range(5):  # a cold deep page may pass the time limit while its keys are noted
            status, _, body = await call(app, LIST, f"limit=1&offset={deep_at - 1}", auth)
            if status == 200:
                break
            await asyncio.sleep(5)
        deep = json.loads(body)["meta"]["next_cursor"]
        requests = [
            ("list with its total", "limit=20", auth, 200),
            ("filter + sort", "filter[category]=c7&sort=-published_at&limit=20", auth, 200),
            ("search=lorem", "search=lorem&limit=20", auth, 200),
            (f"offset={deep_at}", f"offset={deep_at}&limit=20", auth, 200),
            (f"cursor page after row {deep_at:,}", f"limit=20&after={deep}", auth, 200),
        ]
        await report(app, requests, times, f"{url.split('://')[0]}, {rows:,} rows", fresh)


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.million_reads", description=__doc__)
    parser.add_argument("--work", type=Path, required=True, help="a bench/run database's directory")
    parser.add_argument("--times", type=int, default=400)
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="each request asks another list (an ignored parameter with a counter): every one reads "
        "its page instead of being a kept answer",
    )
    args = parser.parse_args()
    asyncio.run(run(args.work, args.times, args.fresh))


if __name__ == "__main__":
    main()
