"""The floor on PostgreSQL (asyncpg) and MariaDB (asyncmy for `mysql+asyncmy://`, else aiomysql): the
kit's floor app, async drivers; and the floor of the writes on all three databases (SQLite through
stdlib sqlite3 on the event loop, as the kit's floor reads it).

Raw ASGI, no framework, a pool of the driver's own connections, hand-written SQL, orjson output:
the least work a Python server does for the same six requests, so pb_headless on these databases
has a bar of its own. The request shapes and answers are the kit's floor's (Directus' REST shape).

    FLOOR_URL=postgresql://postgres@127.0.0.1:5432/pb_bench_floor_100000 uvicorn bench.floor_async:app
    FLOOR_URL=sqlite:////tmp/pb-bench/sqlite-100000/floor.db uvicorn bench.floor_async:app

Writes do the least work a write can: the token check, then one INSERT, UPDATE or DELETE in its own
transaction (autocommit), no validation, no reading back.
    POST   /items/articles        a JSON object of columns → 201 {"data": {"id": <new id>}}
    PATCH  /items/articles/<id>   a JSON object of columns → 200 {"data": {"id": <id>}}, 403 if none
    DELETE /items/articles/<id>   → 204, 403 if none (Directus answers 403 for a missing item)
"""

from __future__ import annotations

import hashlib
import hmac
import os
from urllib.parse import parse_qsl, urlsplit

import orjson

URL = os.environ.get("FLOOR_URL", "postgresql://postgres@127.0.0.1:5432/pb_bench_floor_100000")
KIND = "postgresql" if URL.startswith("postgresql") else "sqlite" if URL.startswith("sqlite") else "mariadb"
POOL_SIZE = 8  # as the pb_headless host's pool on PostgreSQL (bench/dataset.py)
FIELDS = ("id", "title", "body", "category", "price", "published_at")
FIELDSET = frozenset(FIELDS)
OPS = {"_eq": "=", "_neq": "!=", "_gt": ">", "_gte": ">=", "_lt": "<", "_lte": "<="}
DEFAULT_LIMIT = 100
if KIND == "sqlite":
    STAMP = "strftime('%Y-%m-%dT%H:%M:%S', published_at / 1000, 'unixepoch')"
elif KIND == "postgresql":
    STAMP = "to_char(to_timestamp(published_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
else:
    STAMP = "DATE_FORMAT(FROM_UNIXTIME(published_at DIV 1000), '%%Y-%%m-%%dT%%H:%%i:%%s')"
SELECT = f"SELECT id, title, body, category, price, {STAMP} FROM articles"
JSON_HDR = [(b"content-type", b"application/json; charset=utf-8")]
OK_BODY = orjson.dumps({"ok": True})
pool = None


def err(status, code, msg):
    return status, orjson.dumps({"errors": [{"message": msg, "extensions": {"code": code}}]})


FORBIDDEN = err(403, "FORBIDDEN", "You don't have permission to access this.")
UNAUTH = err(401, "INVALID_CREDENTIALS", "Invalid user credentials.")


class Params:
    """Placeholders in the driver's style: $1, $2 … for asyncpg, %s for aiomysql."""

    def __init__(self):
        self.values = []

    def __call__(self, value):
        self.values.append(value)
        return f"${len(self.values)}" if KIND == "postgresql" else "?" if KIND == "sqlite" else "%s"


async def query(sql, args, one=False):
    if KIND == "sqlite":
        cursor = pool.execute(sql, args)
        return cursor.fetchone() if one else cursor.fetchall()
    if KIND == "postgresql":
        async with pool.acquire() as con:
            if one:
                row = await con.fetchrow(sql, *args)
                return None if row is None else tuple(row)
            return [tuple(row) for row in await con.fetch(sql, *args)]
    async with pool.acquire() as con, con.cursor() as cur:
        await cur.execute(sql, args)
        return await cur.fetchone() if one else await cur.fetchall()


async def authorized(headers):
    for key, value in headers:
        if key == b"authorization":
            if value[:7].lower() != b"bearer ":
                return False
            digest = hashlib.sha256(value[7:].strip()).hexdigest()
            p = Params()
            row = await query(
                f"SELECT token_hash FROM api_tokens WHERE token_hash = {p(digest)} "
                "AND status = 'active' LIMIT 1",
                p.values,
                one=True,
            )
            return row is not None and hmac.compare_digest(row[0], digest)
    return False


def record(row):
    data = dict(zip(FIELDS, row, strict=True))
    data["price"] = float(data["price"]) if data["price"] is not None else None
    return data


async def list_items(qs):
    where, p, order = [], Params(), "id ASC"
    limit, offset, want_total = DEFAULT_LIMIT, 0, False
    for key, value in parse_qsl(qs, keep_blank_values=True):
        if key == "limit":
            limit = int(value)
        elif key == "offset":
            offset = int(value)
        elif key == "sort":
            parts = []
            for name in value.split(","):
                desc = name.startswith("-")
                name = name.lstrip("-")
                if name not in FIELDSET:
                    return err(400, "INVALID_QUERY", f"unknown sort field {name}")
                parts.append(f"{name} {'DESC' if desc else 'ASC'}")
            order = ", ".join(parts)
        elif key == "search":
            pattern = f"%{value.lower()}%"
            where.append(
                f"(LOWER(title) LIKE {p(pattern)} OR LOWER(body) LIKE {p(pattern)} "
                f"OR LOWER(category) LIKE {p(pattern)})"
            )
        elif key == "meta":
            want_total = "total_count" in value.split(",") or value == "*"
        elif key.startswith("filter[") and key.endswith("]"):
            try:
                name, op = key[7:-1].split("][")
            except ValueError:
                return err(400, "INVALID_QUERY", "bad filter")
            if name not in FIELDSET or op not in OPS:
                return err(400, "INVALID_QUERY", "bad filter")
            where.append(f"{name} {OPS[op]} {p(value)}")
    sql = SELECT + (" WHERE " + " AND ".join(where) if where else "") + f" ORDER BY {order}"
    if limit >= 0:
        sql += f" LIMIT {p(limit)}"
        if offset:
            sql += f" OFFSET {p(offset)}"
    data = [record(row) for row in await query(sql, p.values)]
    if want_total:
        total = (await query("SELECT count(*) FROM articles", [], one=True))[0]
        return 200, orjson.dumps({"meta": {"total_count": total}, "data": data})
    return 200, orjson.dumps({"data": data})


async def one_item(item_id):
    try:
        pk = int(item_id)
    except ValueError:
        return FORBIDDEN
    p = Params()
    row = await query(SELECT + f" WHERE id = {p(pk)}", p.values, one=True)
    return FORBIDDEN if row is None else (200, orjson.dumps({"data": record(row)}))


async def write(sql, args, returning=False):
    """One statement in its own transaction: the new key (`returning`) or how many rows it touched."""
    if KIND == "sqlite":
        cursor = pool.execute(sql, args)
        return cursor.lastrowid if returning else cursor.rowcount
    if KIND == "postgresql":
        async with pool.acquire() as con:
            if returning:
                return await con.fetchval(sql + " RETURNING id", *args)
            status = await con.execute(sql, *args)
            return int(status.rsplit(" ", 1)[1])
    async with pool.acquire() as con, con.cursor() as cur:
        touched = await cur.execute(sql, args)
        return cur.lastrowid if returning else touched


def columns(body):
    """The body's columns, or None when it is not a JSON object of known columns."""
    try:
        values = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(values, dict) or not values or not FIELDSET.issuperset(values) or "id" in values:
        return None
    return values


async def create_item(body):
    values = columns(body)
    if values is None:
        return err(400, "INVALID_PAYLOAD", "a JSON object of columns")
    p = Params()
    marks = ", ".join(p(value) for value in values.values())
    new_id = await write(f"INSERT INTO articles ({', '.join(values)}) VALUES ({marks})", p.values, True)
    return 201, orjson.dumps({"data": {"id": new_id}})


async def change_item(item_id, method, body):
    try:
        pk = int(item_id)
    except ValueError:
        return FORBIDDEN
    p = Params()
    if method == "DELETE":
        return (204, b"") if await write(f"DELETE FROM articles WHERE id = {p(pk)}", p.values) else FORBIDDEN
    values = columns(body)
    if values is None:
        return err(400, "INVALID_PAYLOAD", "a JSON object of columns")
    changes = ", ".join(f"{name} = {p(value)}" for name, value in values.items())
    touched = await write(f"UPDATE articles SET {changes} WHERE id = {p(pk)}", p.values)
    return (200, orjson.dumps({"data": {"id": pk}})) if touched else FORBIDDEN


async def read_body(receive):
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def open_pool():
    global pool
    parts = urlsplit(URL)
    if KIND == "sqlite":
        import sqlite3

        # One connection, queried on the event loop (the kit's floor); autocommit; WAL as pb's file and
        # PocketBase's; a writer that finds the lock taken by the other worker waits for it.
        pool = sqlite3.connect(URL.split("///", 1)[1], isolation_level=None, check_same_thread=False)
        pool.execute("PRAGMA busy_timeout = 10000")
        pool.execute("PRAGMA journal_mode = WAL")
    elif KIND == "postgresql":
        import asyncpg

        pool = await asyncpg.create_pool(URL, min_size=POOL_SIZE, max_size=POOL_SIZE)
    else:
        # The same driver as pb_headless's host in the run (bench/servers.py served_url).
        if URL.startswith("mysql+asyncmy"):
            import asyncmy as driver
            from asyncmy.constants.CLIENT import FOUND_ROWS
        else:
            import aiomysql as driver
            from pymysql.constants.CLIENT import FOUND_ROWS

        pool = await driver.create_pool(
            host=parts.hostname,
            port=parts.port or 3306,
            user=parts.username or "root",
            password=parts.password or "",
            db=parts.path.lstrip("/"),
            minsize=POOL_SIZE,
            maxsize=POOL_SIZE,
            autocommit=True,
            init_command="SET time_zone = '+00:00'",
            client_flag=FOUND_ROWS,  # an UPDATE counts the rows it found, as on the other databases
        )


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await open_pool()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                pool.close()
                await send({"type": "lifespan.shutdown.complete"})
                return
    path = scope["path"]
    if path == "/ok":
        status, body = 200, OK_BODY
    elif scope["method"] not in ("GET", "POST", "PATCH", "DELETE"):
        status, body = err(405, "METHOD_NOT_ALLOWED", "GET, POST, PATCH, DELETE only")
    elif path == "/items/articles" or path.startswith("/items/articles/"):
        method = scope["method"]
        if not await authorized(scope["headers"]):
            status, body = UNAUTH
        elif method == "POST" and path == "/items/articles":
            status, body = await create_item(await read_body(receive))
        elif method in ("PATCH", "DELETE") and path != "/items/articles":
            sent = await read_body(receive) if method == "PATCH" else b""
            status, body = await change_item(path[len("/items/articles/") :], method, sent)
        elif method != "GET":
            status, body = err(405, "METHOD_NOT_ALLOWED", "not on this address")
        elif path == "/items/articles":
            try:
                status, body = await list_items(scope["query_string"].decode("latin-1"))
            except ValueError:
                status, body = err(400, "INVALID_QUERY", "bad query")
        else:
            status, body = await one_item(path[len("/items/articles/") :])
    else:
        status, body = err(404, "ROUTE_NOT_FOUND", f"Route {path} doesn't exist.")
    await send({"type": "http.response.start", "status": status, "headers": JSON_HDR})
    await send({"type": "http.response.body", "body": body})
