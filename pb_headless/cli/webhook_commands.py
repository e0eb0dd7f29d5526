"""What each `pb-headless webhooks …` command does; every handler returns the text to print."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from datetime import datetime

import orjson
from databases import Database

from pb_headless.cli.output import CommandError, warn
from pb_headless.cli.site import site_api
from pb_headless.registry import ObjectSpec
from pb_headless.settings import SettingsStore, is_on
from pb_headless.webhooks.destinations import ALLOW_PRIVATE_SETTING, private_destination_warning
from pb_headless.webhooks.records import DeliveryInfo, WebhookInfo
from pb_headless.webhooks.selection import ALL_OBJECTS, parse_objects
from pb_headless.webhooks.store import WebhookStore

Handler = Callable[[Database, argparse.Namespace], Awaitable[str]]
UNCHECKED = (
    "the object names were not checked against what the site publishes: name the site's app in --app "
    "or PB_APP (e.g. --app app:app) to have them checked"
)
UNCHECKED_FILTER = (
    "the filter was not checked against the object's filterable fields: name the site's app in --app "
    "or PB_APP (e.g. --app app:app) to have it checked"
)


async def published(database: Database, args: argparse.Namespace) -> dict[str, ObjectSpec] | None:
    """The objects the site publishes, by name, when the host's app is named (--app, PB_APP); else
    None. A site folder alone would not do: it knows the declaration file, not the constructor's
    tables."""
    api = await site_api(database, args, purpose="webhooks")
    if api is None:
        return None
    try:  # the registry alone, as `openapi` reads it: nothing is started or written
        catalog = (await api.snapshot()).catalog
        return {name: catalog[name] for name in sorted(catalog)}
    finally:
        await api.shutdown()


async def _known(database: Database, args: argparse.Namespace) -> dict[str, ObjectSpec] | None:
    known = await published(database, args)
    if known is None and args.objects is not None and parse_objects(args.objects) != (ALL_OBJECTS,):
        warn(UNCHECKED)
    return known


async def _create(database: Database, args: argparse.Namespace) -> str:
    webhook, secret = await WebhookStore(database).create(
        args.name,
        args.url,
        objects=args.objects,
        events=args.events,
        filter=args.filter,
        known=(known := await _known(database, args)),
    )
    _warn_unchecked_filter(webhook, known)
    await _warn_private(database, webhook)
    return (
        f"created webhook '{webhook.name}' for {webhook.url} (objects {','.join(webhook.objects)}, "
        + (f"filter {webhook.filter}, " if webhook.filter else "")
        + "events "
        f"{','.join(webhook.events)}); its signing secret, shown once:\n{secret}"
    )


async def _edit(database: Database, args: argparse.Namespace) -> str:
    given = (args.url, args.objects, args.events, args.filter, args.enabled)
    if all(value is None for value in given):
        raise CommandError(
            "nothing to change: give --url, --objects, --events, --filter, --enable or --disable"
        )
    known = await _known(database, args)
    webhook = await WebhookStore(database).update(
        args.name,
        url=args.url,
        objects=args.objects,
        events=args.events,
        filter=args.filter,
        enabled=args.enabled,
        known=known,
    )
    if args.filter:
        _warn_unchecked_filter(webhook, known)
    await _warn_private(database, webhook)
    return f"saved webhook '{webhook.name}'; its secret and delivery log are kept:\n{_webhook_line(webhook)}"


def _warn_unchecked_filter(webhook: WebhookInfo, known: dict[str, ObjectSpec] | None) -> None:
    if known is None and webhook.filter:
        warn(UNCHECKED_FILTER)


async def _warn_private(database: Database, webhook: WebhookInfo) -> None:
    allowed = is_on(await SettingsStore(database).get(ALLOW_PRIVATE_SETTING))
    warning = private_destination_warning(webhook.url, allowed)
    if warning:
        warn(warning)


async def _test(database: Database, args: argparse.Namespace) -> str:
    store = WebhookStore(database)
    takes_all = ALL_OBJECTS in (await store.get(args.name)).objects  # an unknown name is refused first
    known = await published(database, args)
    if takes_all and known is None and not args.object:
        raise CommandError(
            f"the webhook '{args.name}' takes every object: give --object NAME for its test event, or "
            "name the site's app in --app (or PB_APP) so the console knows what it publishes"
        )
    delivery = await store.send_test(args.name, object_name=args.object, known=known)
    webhook = await store.get(args.name)
    if delivery.status != "success":
        raise CommandError(
            f"the test event {delivery.type} to {webhook.url} failed: {delivery.error} "
            f"(delivery {delivery.id} in the log)"
        )
    return (
        f"sent the test event {delivery.type} to {webhook.url}: answer {delivery.answer_code} in "
        f"{delivery.duration_ms} ms (delivery {delivery.id} in the log)"
    )


async def _list(database: Database, args: argparse.Namespace) -> str:
    webhooks = await WebhookStore(database).list()
    if args.json:
        return _json([webhook.as_dict() for webhook in webhooks])
    return "\n".join(_webhook_line(webhook) for webhook in webhooks) if webhooks else "no webhooks"


def _webhook_line(webhook: WebhookInfo) -> str:
    state = "enabled" if webhook.enabled else "disabled"
    objects, events = ",".join(webhook.objects), ",".join(webhook.events)
    line = f"{webhook.name}\t{webhook.url}\tobjects={objects}\tevents={events}"
    line += f"\tfilter={webhook.filter}\t{state}" if webhook.filter else f"\t{state}"
    if webhook.failing and webhook.failing_since:
        line += f"\tlast=failing since {_time(webhook.failing_since)}"
        line += f": {webhook.last_error}" if webhook.last_error else ""
    else:
        line += f"\tlast={webhook.last_status or 'none'}"
    return line + (f"\tnote: {webhook.note}" if webhook.note else "")


def _switch(action: str) -> Handler:
    async def switch(database: Database, args: argparse.Namespace) -> str:
        await getattr(WebhookStore(database), action)(args.name)
        return f"{action}d webhook '{args.name}'"

    return switch


async def _deliveries(database: Database, args: argparse.Namespace) -> str:
    deliveries = await WebhookStore(database).deliveries(args.name)
    if args.json:
        return _json([delivery.as_dict() for delivery in deliveries])
    return "\n".join(_delivery_line(item) for item in deliveries) if deliveries else "no deliveries yet"


def _delivery_line(delivery: DeliveryInfo) -> str:
    code = delivery.answer_code if delivery.answer_code is not None else "-"
    pending = delivery.status == "pending" and delivery.next_try_at is not None
    following = delivery.next_try_at.isoformat() if pending and delivery.next_try_at else "-"
    line = (
        f"{delivery.id}\t{delivery.type}\tid={delivery.row_key or '-'}\t{delivery.status}\tanswer={code}"
        f"\ttries={delivery.tries}\tnext={following}\tcreated={_time(delivery.created_at)}"
        f"\tlast_try={_time(delivery.last_try_at)}"
    )
    return line + (f"\t{delivery.error}" if delivery.error else "")


def _time(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "-"


async def _redeliver(database: Database, args: argparse.Namespace) -> str:
    delivery = await WebhookStore(database).redeliver(args.delivery_id)
    return f"delivery {delivery.id} ({delivery.type}) will be tried again by the running site within seconds"


def _json(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


WEBHOOK_COMMANDS: dict[tuple[str, str | None], Handler] = {
    ("webhooks", "create"): _create,
    ("webhooks", "edit"): _edit,
    ("webhooks", "test"): _test,
    ("webhooks", "list"): _list,
    ("webhooks", "disable"): _switch("disable"),
    ("webhooks", "enable"): _switch("enable"),
    ("webhooks", "delete"): _switch("delete"),
    ("webhooks", "deliveries"): _deliveries,
    ("webhooks", "redeliver"): _redeliver,
}
