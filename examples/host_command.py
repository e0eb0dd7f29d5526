"""The command line the example hosts share: serve the host, or print a new API token for it."""

from __future__ import annotations

import argparse
import asyncio
import secrets

import uvicorn
from databases import Database

from pb_headless import TokenStore, install


async def new_token(database_url: str, scopes: str) -> str:
    database = Database(database_url)
    await database.connect()
    try:
        await install(database)
        _, plain = await TokenStore(database).create(f"example-{secrets.token_hex(3)}", scopes)
        return plain
    finally:
        await database.disconnect()


def run(package: str, database_url: str, default_scopes: str) -> None:
    """`python -m <package> [serve] [--host H] [--port P]` or `python -m <package> token [--scopes S]`."""
    parser = argparse.ArgumentParser(prog=f"python -m {package}")
    parser.add_argument("command", nargs="?", choices=["serve", "token"], default="serve")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--scopes", default=default_scopes)
    args = parser.parse_args()
    if args.command == "token":
        print(asyncio.run(new_token(database_url, args.scopes)))
        return
    uvicorn.run(f"{package}.app:app", host=args.host, port=args.port)
