"""The command line of `pb-headless webhooks …` (argparse only, like parser.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Command = Callable[[argparse._SubParsersAction, str, str], argparse.ArgumentParser]
AddName = Callable[[argparse.ArgumentParser, str], None]
NAME = "the endpoint's name"


def add_webhook_commands(
    commands: argparse._SubParsersAction, command: Command, parser_class: type, add_name: AddName
) -> None:
    webhooks = commands.add_parser(
        "webhooks",
        help="register webhook endpoints, edit and test them, read their delivery log",
        description=(
            "Register webhook endpoints, edit and test them, and read their delivery log. The signing "
            "secret is shown once, by create; list never shows it. A running site delivers (see "
            "docs/webhooks.md). With the site named in --app (or PB_APP, or its folder in PB_SITE_DIR), "
            "object names are checked against what it publishes."
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
    _selection(create, "*", "create,update,delete")
    edit = command(
        actions,
        "edit",
        "change an endpoint's URL, objects, events, filter or state; keeps its secret and log",
    )
    add_name(edit, NAME)
    edit.add_argument("--url", help="where deliveries are POSTed, http:// or https:// (default: unchanged)")
    _selection(edit, None, None)
    state = edit.add_mutually_exclusive_group()
    state.add_argument("--enable", dest="enabled", action="store_const", const=True, help="deliver to it")
    state.add_argument("--disable", dest="enabled", action="store_const", const=False, help="stop delivering")
    lister = command(actions, "list", "list endpoints: name, url, objects, events, state, last delivery")
    lister.add_argument("--json", action="store_true", help="print a JSON array instead of lines")
    for name, text in (
        ("disable", "stop delivering to an endpoint, keeping it"),
        ("enable", "deliver to an endpoint again (changes made while it was disabled are not sent)"),
        ("delete", "delete an endpoint and its delivery log"),
    ):
        add_name(command(actions, name, text), NAME)
    test = command(
        actions,
        "test",
        "POST a signed test event (type <object>.test, no id, no record) to an endpoint now, once, and "
        "print the answer; the delivery log keeps it",
    )
    add_name(test, NAME)
    test.add_argument(
        "--object",
        help="the object the event names (default: the endpoint's first; required for * "
        "when the site is not named in --app)",
    )
    deliveries = command(actions, "deliveries", "an endpoint's delivery log, newest first")
    add_name(deliveries, NAME)
    deliveries.add_argument("--json", action="store_true", help="print a JSON array instead of lines")
    redeliver = command(actions, "redeliver", "try a delivery again now, with a fresh set of retries")
    redeliver.add_argument("delivery_id", metavar="DELIVERY_ID", help="the id the delivery log shows")


def _selection(parser: argparse.ArgumentParser, objects: str | None, events: str | None) -> None:
    """--objects and --events: create's defaults are every object and event; edit's keep what is set."""
    parser.add_argument(
        "--objects",
        default=objects,
        help="comma-separated object names, or * for every object "
        + (f"(default: {objects})" if objects else "(default: unchanged)"),
    )
    parser.add_argument(
        "--events",
        default=events,
        help="comma-separated events of create, update, delete "
        + ("(default: all three)" if events else "(default: unchanged)"),
    )
    parser.add_argument(
        "--filter",
        default=None,
        help="for an endpoint of one object: the filters and search of its list, as a query string, "
        "e.g. 'filter[category]=news&search=launch'; a row that leaves the selection is sent as "
        "<object>.delete " + ("(default: none)" if objects else "(default: unchanged; '' removes it)"),
    )
