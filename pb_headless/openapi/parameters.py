"""The query parameters of an object's list (CONTRACT §4, §11), one per field and operator.

Filter values are typed strictly: a value the field's type refuses is answered 422. The other
parameters are ignored rather than refused when they make no sense (named in `meta.ignored`, with a
200): `sort`, `fields` and `with` list the values that mean something, and `limit`, `offset` and
`page` are a number or any other text, so that the document promises no 4xx the API never sends.
"""

from __future__ import annotations

from typing import Any

from pb_headless.openapi.values import TEXT_PATTERN, Schema, flag_schema, query_value_schema
from pb_headless.query.grammar import LARGEST_NUMBER, LIST_OPERATORS, OPERATORS
from pb_headless.query.planner import MAX_LIST_VALUES
from pb_headless.registry.spec import JSON, STRING, FieldSpec, ObjectSpec

Parameter = dict[str, Any]

# Documentation order: equality first, then comparisons, text, lists, nulls. An operator added to the
# grammar without a place here fails at import, so it cannot go undocumented.
_PREFERRED = ("eq", "ne", "gt", "gte", "lt", "lte", "like", "in", "nin", "between", "null")
OPERATOR_ORDER = tuple(sorted(OPERATORS, key=_PREFERRED.index))
_IGNORED = "Anything else is ignored and named in `meta.ignored`."
_OPERATOR_TEXT = {
    "eq": "is equal to the value", "ne": "is not equal to the value (rows where it is null do not match)",
    "gt": "is greater than the value", "gte": "is greater than or equal to the value",
    "lt": "is less than the value", "lte": "is less than or equal to the value",
    "like": "contains the word, case-insensitively (`%`, `_` and `\\` match themselves)",
    "in": f"is one of the comma-separated values (at most {MAX_LIST_VALUES})",
    "nin": f"is none of the comma-separated values (at most {MAX_LIST_VALUES}; null rows do not match)",
    "between": "is between the two comma-separated values, both included",
    "null": "is null (`true` or `1`) or is not null (`false` or `0`)",
}


def operators_for(field: FieldSpec) -> tuple[str, ...]:
    """The operators the planner applies to `field`: none on JSON, `like` only on text."""
    if field.kind == JSON:
        return ()
    return tuple(op for op in OPERATOR_ORDER if op != "like" or field.kind == STRING)


def list_parameters(spec: ObjectSpec) -> list[Parameter]:
    """Every parameter of `GET /objects/{name}`, in the order a reader scans them."""
    parameters: list[Parameter] = []
    for name, field in spec.fields.items():
        if name in spec.filterable:
            parameters += filter_parameters(field)
    if spec.searchable:
        parameters.append(_search(spec))
    sortable = [name for name, field in spec.fields.items() if name in spec.sortable and field.kind != JSON]
    if sortable:
        parameters.append(_sort(spec, sortable))
    return parameters + show_parameters(spec) + _paging(spec)


def show_parameters(spec: ObjectSpec) -> list[Parameter]:
    """`fields` and `with`, which apply to show as to list."""
    parameters = [_comma_list("fields", list(spec.fields),
                              f"The fields to return, comma-separated; `{spec.pk.name}` is always included. "
                              f"{_IGNORED}")]
    if spec.relations:
        parameters.append(_comma_list(
            "with", list(spec.relations),
            "Relations to load, comma-separated; one level deep. A to-one relation is an object or "
            f"null, a to-many one an array. {_IGNORED}"))
    return parameters


def filter_parameters(field: FieldSpec) -> list[Parameter]:
    """`filter[f]` (equality) and `filter[f][op]` for each operator that applies to the field."""
    operators = operators_for(field)
    if not operators:
        return []
    return [_filter(f"filter[{field.name}]", field, "eq", "Same as `[eq]`: "),
            *(_filter(f"filter[{field.name}][{op}]", field, op, "") for op in operators)]


def _filter(name: str, field: FieldSpec, operator: str, prefix: str) -> Parameter:
    description = f"{prefix}`{field.name}` {_OPERATOR_TEXT[operator]}."
    if operator == "null":
        return _query(name, flag_schema(), description)
    if operator in LIST_OPERATORS:
        size = (2, 2) if operator == "between" else (1, MAX_LIST_VALUES)
        schema = {"type": "array", "items": query_value_schema(field, in_list=True),
                  "minItems": size[0], "maxItems": size[1]}
        if field.kind == STRING:
            description += f" Values containing commas go as repeated `{name}[]=` pairs instead."
        return {**_query(name, schema, description), "style": "form", "explode": False}
    return _query(name, query_value_schema(field), description)


def _search(spec: ObjectSpec) -> Parameter:
    fields = ", ".join(f"`{name}`" for name in spec.searchable)
    return _query("search", {"type": "string", "pattern": TEXT_PATTERN},
                  f"Whitespace-separated words; every word must appear, case-insensitively and "
                  f"literally, in one of {fields}. An empty value is ignored.")


def _sort(spec: ObjectSpec, sortable: list[str]) -> Parameter:
    values = [value for name in sortable for value in (name, f"-{name}")]
    default = ", ".join(f"`{'-' if descending else ''}{name}`" for name, descending in spec.default_sort)
    return _comma_list("sort", values,
                       f"Fields to sort by, comma-separated; a leading `-` sorts descending. Without it: "
                       f"{default or f'`{spec.pk.name}`'}; `{spec.pk.name}` always breaks ties. {_IGNORED}")


def _comma_list(name: str, values: list[str], description: str) -> Parameter:
    """The meaningful values as an enum, beside any text: the API ignores (200) what it does not know."""
    schema = {"type": "array", "items": {"anyOf": [{"type": "string", "enum": values}, {"type": "string"}]}}
    listed = ", ".join(f"`{value}`" for value in values)
    return {**_query(name, schema, f"{description} Values: {listed}."), "style": "form", "explode": False}


def _paging(spec: ObjectSpec) -> list[Parameter]:
    def number(minimum: int, default: int | None = None) -> Schema:
        schema: Schema = {"anyOf": [{"type": "integer", "minimum": minimum, "maximum": LARGEST_NUMBER},
                                    {"type": "string"}]}
        if default is not None:
            schema["default"] = default
        return schema

    return [
        _query("limit", number(0, spec.per_page),
               f"Page size, default {spec.per_page}; values above {spec.max_per_page} count as "
               f"{spec.max_per_page}. `0` returns no records and the real `meta.total`. {_IGNORED}"),
        _query("offset", number(0, 0), f"Records to skip. Wins over `page`. {_IGNORED}"),
        _query("page", number(1), f"1-based page number: skips `(page - 1) * limit` records. {_IGNORED}"),
    ]


def _query(name: str, schema: Schema, description: str) -> Parameter:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema}
