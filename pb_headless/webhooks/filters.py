"""An endpoint's filter: the filters and search of a list, kept as a query string
(`filter[category]=news&search=launch`), checked against the one object it applies to when the
endpoint is registered, and turned into the list's plan when changes are fanned out (docs/webhooks.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode

from pb_headless.query.grammar import parse_query
from pb_headless.query.planner import ListPlan, plan_selection
from pb_headless.registry import ObjectSpec
from pb_headless.webhooks.selection import ALL_OBJECTS, WebhookError

SELECTION_QUERY = frozenset({"filter", "search"})
MAX_FILTER_LENGTH = 2000


def parse_filter(text: str | None) -> str | None:
    """The filter in one canonical query-string form; None (or "") is no filter. Every parameter must
    be a `filter[...]` or `search`."""
    text = (text or "").strip().removeprefix("?")
    if not text:
        return None
    if len(text) > MAX_FILTER_LENGTH:
        raise WebhookError(f"a filter is at most {MAX_FILTER_LENGTH} characters")
    pairs = parse_qsl(text, keep_blank_values=True)
    for key, _ in pairs:
        if key != "search" and not key.startswith("filter["):
            raise WebhookError(
                f"'{key}' is not a filter: a filter takes filter[<field>]=<value>, "
                "filter[<field>][<operator>]=<value> and search=<words>, as a list does"
            )
    return urlencode(pairs, safe="[]") if pairs else None


def checked_filter(
    text: str | None, objects: tuple[str, ...], known: Iterable[str] | Mapping[str, ObjectSpec] | None
) -> str | None:
    """The filter as stored, refused when it does not apply: it needs exactly one object, and (when
    the site's objects are known) every filter must be one that object's lists take, with a value
    of the field's type."""
    written = parse_filter(text)
    if written is None:
        return None
    if len(objects) != 1 or objects == (ALL_OBJECTS,):
        raise WebhookError("a filter applies to one object: name exactly one in objects")
    spec = known.get(objects[0]) if isinstance(known, Mapping) else None
    if not isinstance(spec, ObjectSpec):
        return written  # the site's objects are not known here: checked when changes are fanned out
    plan = selection_plan(spec, written)
    for key, messages in plan.details.items():
        raise WebhookError(f"the filter is refused: {key} {messages[0]}")
    if plan.ignored:
        raise WebhookError(
            f"the filter is refused: {objects[0]} does not filter by {', '.join(plan.ignored)}"
            " (docs/query.md: its filterable and searchable fields)"
        )
    return written


def selection_plan(spec: ObjectSpec, written: str) -> ListPlan:
    """The list plan of a stored filter: exactly what `GET /objects/{name}?<filter>` selects."""
    query = parse_query(parse_qsl(written, keep_blank_values=True), SELECTION_QUERY)
    return plan_selection(spec, query)
