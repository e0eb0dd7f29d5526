"""The site a command speaks for: the host's own `HeadlessAPI`, handed over through a console hook,
or one built from the site folder the way the example site builds its own.

A host hands its API to the console script by naming it in --app (or PB_APP) as `MODULE:ATTRIBUTE`:
the ASGI app the host runs (`app:app`, as uvicorn names it), its `HeadlessAPI`, or a console hook, a
callable that takes the connected `databases.Database` and returns (or awaits to) the `HeadlessAPI`
the host serves — same registry sources, components, custom routes and user loader. Then `openapi`
prints what the site serves, `token create --user` asks the host's loader and the webhook commands
check object names.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from pathlib import Path

from databases import Database

from pb_headless.api import HeadlessAPI
from pb_headless.cli.output import CommandError
from pb_headless.registry import ApiRegistry

HOOK_VARIABLE = "PB_APP"
FORM = "MODULE:ATTRIBUTE"  # the one spelling of --app's value, in its help and in every message here
WANTED = (
    "the ASGI app the host runs (with a HeadlessAPI mounted), its HeadlessAPI, nor a console hook "
    "(a callable taking the database and returning the HeadlessAPI); e.g. app:app"
)


async def site_api(database: Database, args: argparse.Namespace, *, purpose: str) -> HeadlessAPI | None:
    """The host's API when it hands one over; else, for `openapi`, the site folder's; else None."""
    hook = (args.app or os.environ.get(HOOK_VARIABLE) or "").strip()
    named_in = "--app" if args.app else HOOK_VARIABLE
    # As `uvicorn module:app` and `python -m` do, modules of the current folder can be imported:
    # the hook, and components named in PB_COMPONENTS.
    _import_path(Path.cwd())
    if hook:
        api = await host_api(hook, database, named_in)
        if api.database is not database and not api.database.is_connected:
            # The host's own API object (`app:app`) holds the host's Database, which only its
            # lifespan connects: connect it for this command, and let the command's end close it.
            await api.database.connect()
            args.cleanup.push_async_callback(api.database.disconnect)
        return api
    if purpose == "openapi":
        return folder_api(database, args.api_file, args)
    return None


async def host_api(hook: str, database: Database, named_in: str = HOOK_VARIABLE) -> HeadlessAPI:
    module_name, _, attribute = hook.partition(":")
    if not module_name or not attribute:
        raise CommandError(f"{named_in}: {hook!r} is not {FORM}, e.g. app:app or mysite.console:headless_api")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise CommandError(f"{named_in}: no module named {module_name!r} here ({Path.cwd()})") from None
        raise
    factory = getattr(module, attribute, None)
    mounted = find_api(factory)
    if mounted is not None:  # `app:app` or `app:api`: the ASGI app the host runs, or its API
        return mounted
    if not callable(factory):
        raise CommandError(f"{named_in}: {module_name} has no callable {attribute!r}")
    if not _takes_one_argument(factory):
        raise CommandError(f"{named_in}: {hook} is neither {WANTED}")
    api = factory(database)
    if inspect.isawaitable(api):
        api = await api
    if not isinstance(api, HeadlessAPI):
        raise CommandError(f"{named_in}: {hook} returned {type(api).__name__}, not a HeadlessAPI")
    return api


def find_api(target: object) -> HeadlessAPI | None:
    """The `HeadlessAPI` an ASGI app serves: the app itself, or one mounted in it or wrapped by its
    middleware (Starlette and FastAPI routers, `Mount`, `CORSMiddleware`), looked for a few levels deep."""
    seen: set[int] = set()
    todo: list[tuple[object, int]] = [(target, 0)]
    while todo:
        item, depth = todo.pop(0)
        if isinstance(item, HeadlessAPI):
            return item
        if id(item) in seen or depth > 8 or item is None or isinstance(item, str | int | float | bytes):
            continue
        seen.add(id(item))
        todo += [(inner, depth + 1) for inner in _inside(item)]
    return None


def _inside(item: object) -> list[object]:
    """What an ASGI app may hold another in: the wrapped app, a router's routes, added middleware."""
    inner: list[object] = []
    for name in ("api", "app", "router", "middleware_stack"):
        inner.append(getattr(item, name, None))
    inner += list(getattr(item, "routes", None) or ())
    for middleware in getattr(item, "user_middleware", None) or ():
        inner += list(getattr(middleware, "kwargs", {}).values())
    return inner


def _takes_one_argument(factory: object) -> bool:
    try:
        inspect.signature(factory).bind(None)  # type: ignore[arg-type]
    except TypeError:
        return False
    except ValueError:  # no signature to read (some builtins): let the call say
        return True
    return True


def folder_api(database: Database, api_file: str | None, args: argparse.Namespace) -> HeadlessAPI:
    """Without a host: components (the entry-point group and PB_COMPONENTS), then the declaration
    file, and the site folder's custom routes — what the example site builds, minus host parts such as
    its constructor tables."""
    site = _site_folder(api_file)
    declarations = Path(api_file) if api_file else (site / "core" / "App" / "api.py" if site else None)
    if api_file and not Path(api_file).is_file():
        raise CommandError(f"{api_file}: no such declaration file")
    if declarations is None or not declarations.is_file():
        where = f"{declarations}" if declarations else "PB_SITE_DIR is not set"
        # Said once the API is built: when it publishes nothing at all, a refusal says it instead.
        args.folder_warning = (
            f"no declaration file ({where}): the document shows component objects only; set PB_SITE_DIR "
            "to the site folder, pass --api-file, or name the host's app in PB_APP"
        )
        declarations = None
    if site is not None:
        _import_path(site)  # so the file's `from core.App.models import ...` resolves
    registry = ApiRegistry()
    registry.load_components(name for name in os.environ.get("PB_COMPONENTS", "").split(","))
    if declarations is not None:
        registry.load_file(declarations)
    routes = site / "core" / "App" / "routes.py" if site else None
    return HeadlessAPI(database, registry, routes=[routes] if routes and routes.is_file() else [])


def _site_folder(api_file: str | None) -> Path | None:
    """PB_SITE_DIR, or the folder holding the declaration file's core/App."""
    if api_file:
        path = Path(api_file).resolve()
        return path.parents[2] if path.parent.parts[-2:] == ("core", "App") else path.parent
    site = os.environ.get("PB_SITE_DIR", "").strip()
    return Path(site).expanduser().resolve() if site else None


def _import_path(folder: Path) -> None:
    entry = str(folder)
    if entry in sys.path:
        sys.path.remove(entry)
    sys.path.insert(0, entry)
