"""A reader's Python session for one page's fragments (run as a script by tests/docs/running.py).

As a reader pastes a page's fragments one after the other into `python -m asyncio`, the fragments of a
page run in one namespace, with top-level `await`; each runs in the folder and with the variables the
page's terminal has when the page reaches it. A page that
runs against the example site also has the names a host has at hand: `database` (connected to the
site's database), `api` (the site's `HeadlessAPI`, not started) and `registry` (its `ApiRegistry`).

Protocol: one JSON line per fragment on stdin (`{"where", "code", "environ"}`), one JSON line back on stdout
(`{"error": traceback or null, "printed": what the fragment printed}`).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import os
import sys
import traceback
from typing import Any


async def host_names(repository: str, database_url: str) -> dict[str, Any]:
    """The example site's database, API and registry, built as the site builds them."""
    from databases import Database

    sys.path.insert(0, repository)
    try:
        from examples.site.app import build_api
        from examples.site.config import SiteConfig
        from examples.site.site_folder import SiteFolder
        from examples.site.users import UserStore
    finally:
        sys.path.remove(repository)
    database = Database(database_url)
    await database.connect()
    config = SiteConfig.from_environment({"PB_DATABASE_URL": database_url})
    folder = SiteFolder(config.site_dir)
    folder.activate()
    api = build_api(config, folder, database, UserStore(database))
    return {"database": database, "api": api, "registry": api.registry}


async def run(code: str, where: str, namespace: dict[str, Any]) -> dict[str, Any]:
    printed = io.StringIO()
    try:
        compiled = compile(code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        with contextlib.redirect_stdout(printed):
            result = eval(compiled, namespace)  # the page's own fragment, as a reader runs it
            if asyncio.iscoroutine(result):
                await result
    except BaseException:  # whatever the fragment raised is the answer
        return {"error": traceback.format_exc(), "printed": printed.getvalue()}
    return {"error": None, "printed": printed.getvalue()}


async def main(repository: str, database_url: str) -> None:
    sys.path.insert(0, "")  # the current folder, as for `python -m asyncio`
    namespace: dict[str, Any] = {"__name__": "__main__"}
    if database_url:
        namespace.update(await host_names(repository, database_url))
    for line in sys.stdin:
        fragment = json.loads(line)
        os.environ.clear()
        os.environ.update(fragment["environ"])
        os.chdir(fragment["environ"].get("PWD", "."))
        answer = await run(fragment["code"], fragment["where"], namespace)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    if "database" in namespace:
        await namespace["database"].disconnect()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""))
