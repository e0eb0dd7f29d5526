"""`python -m examples.starlette_host [--host H] [--port P]` serves the bookshop;
`python -m examples.starlette_host token [--scopes S]` prints a new API token for it."""

from __future__ import annotations

import argparse
import asyncio
import secrets

import uvicorn
from databases import Database

from examples.starlette_host.app import database_url
from pb_headless import TokenStore, install


async def new_token(scopes: str) -> str:
    database = Database(database_url())
    await database.connect()
    try:
        await install(database)
        _, plain = await TokenStore(database).create(f"example-{secrets.token_hex(3)}", scopes)
        return plain
    finally:
        await database.disconnect()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.starlette_host")
    parser.add_argument("command", nargs="?", choices=["serve", "token"], default="serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--scopes", default="books.read")
    args = parser.parse_args()
    if args.command == "token":
        print(asyncio.run(new_token(args.scopes)))
        return
    uvicorn.run("examples.starlette_host.app:app", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
