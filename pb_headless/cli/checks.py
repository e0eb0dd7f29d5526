"""What `token create` asks the host before it makes a token: does the acting user exist, and does each
scope reach something the site publishes (the administration area's token form asks the same)."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Iterable

from databases import Database

from pb_headless.api import HeadlessAPI
from pb_headless.cli.output import CommandError, warn
from pb_headless.cli.site import site_api
from pb_headless.scopes import scope_covers
from pb_headless.tokens.store import parse_scopes

NO_HOOK = "name the ASGI app your host runs in PB_APP or --app (e.g. --app app:app; docs/console-script.md)"


async def check_token_request(database: Database, args: argparse.Namespace) -> None:
    """Refuse an acting user the host does not know; warn about scopes that reach nothing published."""
    api = await site_api(database, args, purpose="check the token")
    if args.user is not None:
        await _check_user(api, args)
    if api is None:
        return  # without the host, what it publishes is unknown: nothing to compare the scopes with
    unreaching = unreaching_scopes(parse_scopes(args.scopes), await published_scopes(api))
    if unreaching:
        names = ", ".join(f"'{scope}'" for scope in unreaching)
        warn(
            f"{names} reaches nothing the site publishes right now (no object or route asks for it): "
            "check the spelling; it starts to work when something with that name is published"
        )


async def published_scopes(api: HeadlessAPI) -> tuple[str, ...]:
    """Every scope something published asks for: each object's read and write scope, each guarded route's."""
    # The registry alone: no schema check, no change-log triggers, no webhook worker (HeadlessAPI.startup
    # is a serving instance's), so a console command changes nothing in the site's database.
    try:
        catalog = (await api.snapshot()).catalog
    finally:
        await api.shutdown()
    required = [scope for spec in catalog.values() for scope in (spec.read_scope, spec.write_scope)]
    required += [route.guard.scope for route in api.routes if route.guard.scope]
    return tuple(dict.fromkeys(required))


def unreaching_scopes(scopes: Iterable[str], required: Iterable[str]) -> tuple[str, ...]:
    """The scopes that cover none of `required` (`*` always reaches whatever is published)."""
    needed = tuple(required)
    return tuple(
        scope for scope in scopes if scope != "*" and not any(scope_covers(scope, need) for need in needed)
    )


async def _check_user(api: HeadlessAPI | None, args: argparse.Namespace) -> None:
    """A token naming a user the host does not know would answer 401 forever: refuse it at creation."""
    if api is None:
        if args.unchecked_user:
            return
        raise CommandError(
            f"cannot check user id '{args.user}' without the host: {NO_HOOK}; for a host without a "
            "user loader, add --unchecked-user"
        )
    loader = api.user_loader
    if loader is None:
        return  # the host checks no acting user, so none can be missing
    user = loader(args.user)
    if inspect.isawaitable(user):
        user = await user
    if user is None:
        raise CommandError(
            f"no active user with id '{args.user}': the host's user loader found none (deleted, blocked "
            "or never created)"
        )
