"""The query parameters of an object's list (docs/query.md), each described the way the API reads it.

Filters, one parameter per filterable field, are in `filters.py`; their values are typed strictly (a
value the field's type refuses is answered 422). The other
parameters are ignored rather than refused when they make no sense (named in `meta.ignored`, with a
200): `sort`, `fields` and `with` list the values that mean something, and `limit`, `offset` and
`page` are a number or any other text, so that the document promises no 4xx the API never sends.
"""

from __future__ import annotations

from typing import Any

from pb_headless.openapi.filters import filter_parameters
from pb_headless.openapi.values import TEXT_PATTERN, Schema
from pb_headless.query.grammar import LARGEST_NUMBER
from pb_headless.query.limits import MAX_SEARCH_PAIRS, MAX_TEXT_LENGTH, most_search_terms
from pb_headless.registry.spec import JSON, ObjectSpec

Parameter = dict[str, Any]

_IGNORED = "Other values are ignored (named in `meta.ignored`)."
_CURSOR: Schema = {"type": "string", "pattern": "^[A-Za-z0-9_-]*$"}  # base64url (query/cursors.py)


def list_parameters(spec: ObjectSpec) -> list[Parameter]:
    """Every parameter of `GET /objects/{name}`, in the order a reader scans them."""
    parameters = selection_parameters(spec)
    sortable = [name for name, field in spec.fields.items() if name in spec.sortable and field.kind != JSON]
    if sortable:
        parameters.append(_sort(spec, sortable))
    return parameters + show_parameters(spec) + _paging(spec)


def component_name(spec: ObjectSpec, parameter: Parameter) -> str:
    """The name of an object's parameter among the document's components: `articles.fields`,
    `articles.filter.author.name` (component names take no brackets)."""
    return f"{spec.name}.{parameter['name'].replace('[', '.').replace(']', '')}"


def selection_parameters(spec: ObjectSpec) -> list[Parameter]:
    """The filters and `search`, which a list and a change feed take alike (docs/changes.md)."""
    parameters = filter_parameters(spec)
    if spec.searchable:
        parameters.append(_search(spec))
    return parameters


def show_parameters(spec: ObjectSpec) -> list[Parameter]:
    """`fields` and `with`, which apply to show as to list."""
    parameters = [
        _comma_list(
            "fields",
            list(spec.fields),
            f"Fields to return, comma-separated; `{spec.pk.name}` always comes. {_IGNORED}",
        )
    ]
    if spec.relations:
        parameters.append(
            _comma_list(
                "with",
                list(spec.relations),
                f"Relations to load, comma-separated, one level deep. {_IGNORED}",
            )
        )
    return parameters


def _search(spec: ObjectSpec) -> Parameter:
    fields = ", ".join(f"`{name}`" for name in spec.searchable)
    return _query(
        "search",
        {"type": "string", "pattern": TEXT_PATTERN},
        f"Whitespace-separated words; every word must appear, case-insensitively and "
        f"literally, in one of {fields}. An empty value is ignored. At most "
        f"{most_search_terms(len(spec.searchable))} different words (at most {MAX_SEARCH_PAIRS} words × "
        f"searchable fields) and {MAX_TEXT_LENGTH} characters; past a bound the answer is 422.",
    )


def _sort(spec: ObjectSpec, sortable: list[str]) -> Parameter:
    default = ", ".join(f"`{'-' if descending else ''}{name}`" for name, descending in spec.default_sort)
    return _comma_list(
        "sort",
        sortable,
        f"Fields to sort by, comma-separated; a leading `-` sorts descending. Without it: "
        f"{default or f'`{spec.pk.name}`'}; `{spec.pk.name}` always breaks ties. {_IGNORED}",
    )


def _comma_list(name: str, values: list[str], description: str) -> Parameter:
    """One comma-separated string, as the API reads it; the values that mean something are listed in the
    description, not as an enum: the API ignores (200) what it does not know, so no text is invalid."""
    listed = ",".join(values)
    return _query(name, {"type": "string"}, f"{description} Values: `{listed}`.")


def _paging(spec: ObjectSpec) -> list[Parameter]:
    def number(minimum: int, default: int | None = None) -> Schema:
        schema: Schema = {
            "anyOf": [{"type": "integer", "minimum": minimum, "maximum": LARGEST_NUMBER}, {"type": "string"}]
        }
        if default is not None:
            schema["default"] = default
        return schema

    return [
        _query(
            "limit",
            number(0, spec.per_page),
            f"Page size, default {spec.per_page}; values above {spec.max_per_page} count as "
            f"{spec.max_per_page}. `0` returns no records and the real `meta.total`. {_IGNORED}",
        ),
        # No `default` on `offset` or `page`: a client that sent it on every request (Swagger UI,
        # openapi-python-client) would turn `page` off and have `offset` named ignored on cursor pages.
        _query("offset", number(0), f"Records to skip (none when absent). Wins over `page`. {_IGNORED}"),
        _query("page", number(1), f"1-based page number: skips `(page - 1) * limit` records. {_IGNORED}"),
        *(ref_of(name) for name in KEYSET_PARAMETERS),
    ]


def keyset_parameters() -> dict[str, Parameter]:
    """`after`, `before` and `count`: the same on every list, so stated once as components."""
    return {
        parameter["name"]: parameter
        for parameter in (
            _query(
                "after",
                _CURSOR,
                "A `meta.next_cursor`: the page after that position, in the same order, with the same "
                "filters and search (then `offset` and `page` are ignored). A cursor of another list "
                "is a 422.",
            ),
            _query("before", _CURSOR, "A `meta.prev_cursor`: the page before it, as `after`."),
            _query(
                "count",
                {"type": "string", "default": "exact"},
                "`exact` (the default), `estimated` (the database's estimate where counting would be "
                "costly, with `meta.total_estimated`) or `none` (no count, `meta.total` null). "
                f"{_IGNORED}",
            ),
        )
    }


KEYSET_PARAMETERS = ("after", "before", "count")


def ref_of(name: str) -> Parameter:
    return {"$ref": f"#/components/parameters/{name}"}


def _query(name: str, schema: Schema, description: str) -> Parameter:
    return {"name": name, "in": "query", "description": description, "schema": schema}
