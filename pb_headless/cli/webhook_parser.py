"""The command line of `pb-headless webhooks …` (argparse only, like parser.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Command = Callable[[argparse._SubParsersAction, str, str], argparse.ArgumentParser]


def add_webhook_commands(commands: argparse._SubParsersAction, command: Command, parser_class: type) -> None:
    webhooks = commands.add_parser(
        "webhooks",
        help="register webhook endpoints and read their delivery log",
        description=(
            "Register webhook endpoints and read their delivery log. The signing secret is shown once, by "
            "create; list never shows it. A running site delivers (see docs/webhooks.md)."
        ),
    )
    actions = webhooks.add_subparsers(
        dest="action", required=True, metavar="action", parser_class=parser_class
    )
    create = command(
        actions, "create", "register an endpoint; prints its signing secret, once, as the last line"
    )
    create.add_argument("--name", required=True, help="a unique name, e.g. 'search indexer'")
    create.add_argument("--url", required=True, help="where deliveries are POSTed, http:// or https://")
    create.add_argument(
        "--objects", default="*", help="comma-separated object names, or * for every object (default: *)"
    )
    create.add_argument(
        "--events",
        default="create,update,delete",
        help="comma-separated events of create, update, delete (default: all three)",
    )
    lister = command(actions, "list", "list endpoints: name, url, objects, events, state, last delivery")
    lister.add_argument("--json", action="store_true", help="print a JSON array instead of lines")
    for name, text in (
        ("disable", "stop delivering to an endpoint, keeping it"),
        ("enable", "deliver to an endpoint again (changes made while it was disabled are not sent)"),
        ("delete", "delete an endpoint and its delivery log"),
    ):
        command(actions, name, text).add_argument("name", help="the endpoint's name")
    deliveries = command(actions, "deliveries", "an endpoint's delivery log, newest first")
    deliveries.add_argument("name", help="the endpoint's name")
    deliveries.add_argument("--json", action="store_true", help="print a JSON array instead of lines")
    redeliver = command(actions, "redeliver", "try a delivery again now, with a fresh set of retries")
    redeliver.add_argument("delivery_id", metavar="DELIVERY_ID", help="the id the delivery log shows")
