"""What each `pb-headless webhooks …` command does; every handler returns the text to print."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable

import orjson
from databases import Database

from pb_headless.cli.output import warn
from pb_headless.settings import SettingsStore, is_on
from pb_headless.webhooks.destinations import ALLOW_PRIVATE_SETTING, private_destination_warning
from pb_headless.webhooks.records import DeliveryInfo, WebhookInfo
from pb_headless.webhooks.store import WebhookStore

Handler = Callable[[Database, argparse.Namespace], Awaitable[str]]


async def _create(database: Database, args: argparse.Namespace) -> str:
    webhook, secret = await WebhookStore(database).create(
        args.name, args.url, objects=args.objects, events=args.events
    )
    allowed = is_on(await SettingsStore(database).get(ALLOW_PRIVATE_SETTING))
    warning = private_destination_warning(webhook.url, allowed)
    if warning:
        warn(warning)
    return (
        f"created webhook '{webhook.name}' for {webhook.url} (objects {','.join(webhook.objects)}, events "
        f"{','.join(webhook.events)}); its signing secret, shown once:\n{secret}"
    )


async def _list(database: Database, args: argparse.Namespace) -> str:
    webhooks = await WebhookStore(database).list()
    if args.json:
        return _json([webhook.as_dict() for webhook in webhooks])
    return "\n".join(_webhook_line(webhook) for webhook in webhooks) if webhooks else "no webhooks"


def _webhook_line(webhook: WebhookInfo) -> str:
    state = "enabled" if webhook.enabled else "disabled"
    objects, events = ",".join(webhook.objects), ",".join(webhook.events)
    line = f"{webhook.name}\t{webhook.url}\tobjects={objects}\tevents={events}\t{state}"
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
        f"{delivery.id}\t{delivery.type}\tid={delivery.row_key}\t{delivery.status}\tanswer={code}"
        f"\ttries={delivery.tries}\tnext={following}"
    )
    return line + (f"\t{delivery.error}" if delivery.error else "")


async def _redeliver(database: Database, args: argparse.Namespace) -> str:
    delivery = await WebhookStore(database).redeliver(args.delivery_id)
    return f"delivery {delivery.id} ({delivery.type}) will be tried again by the running site within seconds"


def _json(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


WEBHOOK_COMMANDS: dict[tuple[str, str | None], Handler] = {
    ("webhooks", "create"): _create,
    ("webhooks", "list"): _list,
    ("webhooks", "disable"): _switch("disable"),
    ("webhooks", "enable"): _switch("enable"),
    ("webhooks", "delete"): _switch("delete"),
    ("webhooks", "deliveries"): _deliveries,
    ("webhooks", "redeliver"): _redeliver,
}
