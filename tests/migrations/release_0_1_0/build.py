"""Run by the Python of the tests with the code of pb_headless 0.1.0 first on its path (tests/migrations/
test_upgrade_from_0_1_0.py): fills a database as a 0.1.0 site would and records what 0.1.0's API answers.

    python build.py DATABASE_URL '<the table definition as JSON>'

Prints one JSON object: the plain value of each token, and 0.1.0's answers to the requests of REQUESTS.
Only 0.1.0's public names and its constructor package are used, as a site of that release used them.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime, timedelta

import httpx
from databases import Database

import pb_headless
from pb_headless import ApiRegistry, HeadlessAPI, SettingsStore, TokenStore, install
from pb_headless.constructor import ApiTab, ApiTabStore, ConstructorField, ConstructorSource, ConstructorTable
from pb_headless.constructor import create_table as create_constructor_table

USERS = {"7": {"id": "7", "username": "ann"}}
# name → (scopes, options, disabled afterwards)
TOKENS = {
    "reader": ("articles.read", {}, False),
    "everything": ("*", {}, False),
    "expiring": ("articles.read", {"expires_at": datetime.now(UTC) + timedelta(days=400)}, False),
    "acting": ("*", {"user_id": "7"}, False),
    "switched-off": ("*", {}, True),
}
SETTINGS = {"service_cors_origins": "https://app.example.com", "service_cors_max_age": "600"}
REQUESTS = {  # name → (token, path)
    "list": ("reader", "/objects/articles?sort=id"),
    "show": ("everything", "/objects/articles/2"),
    "filtered": ("expiring", "/objects/articles?filter[title]=Second"),
    "me": ("acting", "/me"),
    "refused": ("switched-off", "/objects/articles"),
    "health": (None, "/health"),
}


async def build(url: str, definition: dict) -> dict:
    database = Database(url)
    await database.connect()
    try:
        await install(database)
        fields = tuple(ConstructorField(**field) for field in definition["fields"])
        table = ConstructorTable(definition["name"], definition["title"], fields)
        created = await create_constructor_table(database, table)
        await database.execute_many(created.insert(), definition["rows"])
        await ApiTabStore(database).save(table.name, ApiTab(**definition["tab"]))
        for key, value in SETTINGS.items():
            await SettingsStore(database).set(key, value)
        plain = await _tokens(TokenStore(database))
        answers = await _answers(database, table, plain)
    finally:
        await database.disconnect()
    release = {"version": pb_headless.__version__, "module": pb_headless.__file__}
    return {**release, "tokens": plain, "answers": answers}


async def _tokens(store: TokenStore) -> dict[str, str]:
    plain = {}
    for name, (scopes, options, disabled) in TOKENS.items():
        _, plain[name] = await store.create(name, scopes, **options)
        if disabled:
            await store.disable(name)
    return plain


async def _answers(database: Database, table: ConstructorTable, plain: dict[str, str]) -> dict:
    registry = ApiRegistry()
    registry.add_source(ConstructorSource(lambda _: [table]))
    api = HeadlessAPI(database, registry, user_loader=USERS.get)
    transport = httpx.ASGITransport(app=api)
    answers = {}
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver/api/pb/v1") as client:
        for name, (token, path) in REQUESTS.items():
            headers = {"Authorization": f"Bearer {plain[token]}"} if token else {}
            response = await client.get(path, headers=headers)
            answer = {"status": response.status_code, "body": response.json()}
            answers[name] = {"token": token, "path": path, **answer}
    return answers


if __name__ == "__main__":
    print(json.dumps(asyncio.run(build(sys.argv[1], json.loads(sys.argv[2]))), default=str))
