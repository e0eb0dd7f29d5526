"""What an endpoint takes: its objects (checked against what the site publishes) and its events."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from pb_headless.webhooks.records import WebhookInfo

EVENTS = ("create", "update", "delete")
ALL_OBJECTS = "*"
_OBJECT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class WebhookError(ValueError):
    """A webhook operation was refused; the message says why in one line."""


def parse_objects(objects: str | Iterable[str] | None) -> tuple[str, ...]:
    """Object names from a list or a comma-separated string; `*` (or nothing) is every object."""
    items = objects.split(",") if isinstance(objects, str) else list(objects or ())
    names = tuple(dict.fromkeys(item.strip() for item in items if item and item.strip()))
    if not names or ALL_OBJECTS in names:
        return (ALL_OBJECTS,)
    bad = [name for name in names if not _OBJECT_NAME.fullmatch(name)]
    if bad:
        raise WebhookError(f"'{bad[0]}' is not an object name")
    return names


def known_objects(objects: tuple[str, ...], known: Iterable[str] | None) -> tuple[str, ...]:
    """`objects` when each is a name in `known` (what the site publishes); `None` checks nothing (code
    that registers an endpoint before its objects are published)."""
    if known is None or objects == (ALL_OBJECTS,):
        return objects
    names = sorted(set(known))
    for name in objects:
        if name not in names:
            raise WebhookError(_unknown_object(name, names))
    return objects


def _unknown_object(name: str, names: list[str]) -> str:
    if not names:
        return f"unknown object '{name}': nothing is published yet"
    nearest = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"did you mean '{nearest[0]}'? " if nearest else ""
    return f"unknown object '{name}': {hint}the published objects are {', '.join(names)}"


def parse_events(events: str | Iterable[str] | None) -> tuple[str, ...]:
    """Events from a list or a comma-separated string; nothing is every event."""
    items = events.split(",") if isinstance(events, str) else list(events or ())
    chosen = {item.strip().lower() for item in items if item and item.strip()}
    if not chosen:
        return EVENTS
    unknown = sorted(chosen - set(EVENTS))
    if unknown:
        raise WebhookError(f"unknown event '{unknown[0]}': the events are create, update and delete")
    return tuple(event for event in EVENTS if event in chosen)


def test_event_object(webhook: WebhookInfo, object_name: str | None, known: Iterable[str] | None) -> str:
    """The object a test event names: the one asked for (which the endpoint must take), else the
    endpoint's first, else (an endpoint of every object) the first the site publishes."""
    names = sorted(set(known)) if known is not None else None
    if object_name:
        if object_name not in webhook.objects and ALL_OBJECTS not in webhook.objects:
            raise WebhookError(f"the webhook '{webhook.name}' does not take '{object_name}'")
        return known_objects((object_name,), names)[0]
    if ALL_OBJECTS not in webhook.objects:
        return webhook.objects[0]
    if names:
        return names[0]
    if names is not None:
        raise WebhookError("nothing is published yet, and a test event names a published object")
    raise WebhookError(f"the webhook '{webhook.name}' takes every object: name the one its test event is for")
