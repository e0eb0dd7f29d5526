"""PocketBase (Go, embedded SQLite) as a peer: set up from the kit, its request syntax and its answers.

The kit's `peer-pocketbase/setup.sh --rows N` builds /tmp/peer-pocketbase with the same rows (seed 42,
ids zero-padded to 15 digits), the indexes a tuned deployment adds and a signed-in reader's token. A
PocketBase token goes in `Authorization` as it is, without a scheme.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.kit import kit_dir

ROOT = Path("/tmp/peer-pocketbase")
DATA = ROOT / "pb_data"
TOKEN = ROOT / "token"
COLLECTION = "/api/collections/articles/records"
SEARCH = "(title~'lorem'||body~'lorem'||category~'lorem')"
CATEGORY = "(category='c7')"


def record_id(number: int) -> str:
    return f"{number:015d}"


def rows_loaded() -> int | None:
    """How many articles the PocketBase data holds, or None when it is not set up."""
    database = DATA / "data.db"
    if not (ROOT / "pocketbase").is_file() or not database.is_file() or not TOKEN.is_file():
        return None
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
            return int(connection.execute("SELECT count(*) FROM articles").fetchone()[0])
    except sqlite3.Error:
        return None


# The writes (bench/writes.py) go through the same signed-in user: the kit's collection lets any
# signed-in user read; these rules let it create, update and delete too.
WRITE_RULES = {
    "createRule": "@request.auth.id != ''",
    "updateRule": "@request.auth.id != ''",
    "deleteRule": "@request.auth.id != ''",
}


def ensure(rows: int) -> str:
    """PocketBase set up with `rows` articles (the kit's setup.sh when not, about 30 s), its collection
    open to a signed-in user's writes; its token. Call it while PocketBase is stopped."""
    if rows_loaded() != rows:
        print(f"[bench] setting up PocketBase with {rows:,} rows (kit's setup.sh) …", file=sys.stderr)
        subprocess.run(
            ["bash", str(kit_dir() / "peer-pocketbase" / "setup.sh"), "--rows", str(rows)], check=True
        )
    with sqlite3.connect(DATA / "data.db") as connection:
        connection.execute(
            "UPDATE _collections SET " + ", ".join(f"{rule} = ?" for rule in WRITE_RULES) + " WHERE name = ?",
            (*WRITE_RULES.values(), "articles"),
        )
    return TOKEN.read_text().strip()


def path_of(label: str, rows: int, record: int) -> str:
    """The request in PocketBase's syntax (the kit's setup.sh header lists them)."""
    page = rows * 9 // 10 // 20 + 1
    return {
        "q0_ping": "/api/health",
        "q1_list": f"{COLLECTION}?perPage=20",
        "q2_filter_sort": f"{COLLECTION}?perPage=20&filter={quote(CATEGORY)}&sort=-published_at",
        "q3_search": f"{COLLECTION}?perPage=20&filter={quote(SEARCH)}",
        "q4_show": f"{COLLECTION}/{record_id(record)}",
        "q5_offset": f"{COLLECTION}?perPage=20&page={page}",
        "q6_total": f"{COLLECTION}?perPage=20",
        "q9_count_none": f"{COLLECTION}?perPage=20&skipTotal=1",
    }[label]


def as_envelope(label: str, body: Any) -> dict[str, Any]:
    """A PocketBase answer in the shape the checks read: `data`, and `meta.total` when it counted."""
    if label == "q4_show":
        record = dict(body)
        record["id"] = int(record["id"])
        return {"data": record}
    items = [{**item, "id": int(item["id"])} for item in body.get("items", [])]
    total = body.get("totalItems")
    return {"data": items, "meta": {"total": None if total == -1 else total}}
