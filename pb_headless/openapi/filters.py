"""The filter parameters of an object's list: `filter[<field>]` per filterable field, and `filter`.

`filter[<field>]` is a plain query parameter typed by the field (equality, the common case): in
Swagger UI's "Try it out" it is one text box, and generated clients take it as one argument. The
other operators are the keys `filter[<field>][<op>]` of one object parameter, `filter`, serialized
`form` with `explode: true`: every generator and Swagger UI send each key as its own query pair
(`filter[id][in]=1,2,3&filter[id][gte]=2`), which is how the API reads them; the object's own name
is never sent. `in`, `nin` and `between` take one comma-separated string: an array would go out as
repeated keys, which the API reads as separate conditions. The value schemas are shared components,
one per field kind (`Filter.integer`, `Filter.integer.list`...), so the document grows by a few keys
per field, not by a schema per field and operator (docs/openapi.md, "Filters").
"""

from __future__ import annotations

from pb_headless.fields import FieldKind
from pb_headless.openapi.components import ref
from pb_headless.openapi.parts import Schema
from pb_headless.openapi.values import filter_value_schema, flag_schema, query_list_schema, text_schema
from pb_headless.query.limits import MAX_BOUND_VALUES, MAX_FILTER_CONDITIONS, MAX_LIST_VALUES, MAX_TEXT_LENGTH
from pb_headless.query.operators import Operator
from pb_headless.query.planner import filter_operators
from pb_headless.registry.spec import FieldSpec, ObjectSpec

# Documentation order is the enum's: equality first, then comparisons, text, lists, nulls.
OPERATOR_ORDER = tuple(str(operator) for operator in Operator)
_OPERATOR_TEXT = {
    "eq": "equals",
    "ne": "differs (null matches neither `ne` nor `nin`)",
    "gt": "greater than",
    "gte": "at least",
    "lt": "less than",
    "lte": "at most",
    "like": "contains the word, any case, literally",
    "in": "one of a comma list (values with commas: repeated `filter[f][in][]=` pairs)",
    "nin": "none of a comma list",
    "between": "two comma-separated values, both included",
    "null": "`true`/`1` null, `false`/`0` not null",
}
BOUNDS = (
    f"Bounds per query: {MAX_FILTER_CONDITIONS} conditions, {MAX_LIST_VALUES} values per `in`/`nin`, "
    f"{MAX_TEXT_LENGTH} characters per `like`, {MAX_BOUND_VALUES} values in all; past one, 422."
)
GUIDE = (
    "Filters: `filter[<field>][<op>]=<value>`, one query pair per condition, all ANDed (a repeated key "
    "too); `filter[<field>]=<value>` is `eq`. Operators: "
    + "; ".join(f"`{op}` {_OPERATOR_TEXT[op]}" for op in OPERATOR_ORDER)
    + f". {BOUNDS} A value the field's type refuses is a 422 naming the key."
)
# The component names of the value schemas, by field kind; every other kind filters as text.
_KIND_NAMES = {
    FieldKind.INTEGER: "integer",
    FieldKind.FLOAT: "number",
    FieldKind.DECIMAL: "decimal",
    FieldKind.BOOLEAN: "boolean",
    FieldKind.DATE: "date",
    FieldKind.DATETIME: "datetime",
}


def _filter_operators(spec: ObjectSpec) -> dict[str, tuple[str, ...]]:
    """Each filterable field with the operators the planner applies to it: the planner answers, so
    the document cannot drift from what the API does."""
    return {name: tuple(str(op) for op in operators) for name, operators in filter_operators(spec).items()}


def filter_parameters(spec: ObjectSpec) -> list[Schema]:
    """`filter[<field>]` (equality) for each filterable field, then `filter` with the other operators."""
    fields = _filter_operators(spec)
    if not fields:
        return []
    equality = [_equality(spec, name) for name in fields]
    return [*equality, _operators(spec, fields)]


def filter_schemas(spec: ObjectSpec) -> dict[str, Schema]:
    """The shared value schemas the filter parameters of `spec` refer to."""
    schemas: dict[str, Schema] = {}
    for name, operators in _filter_operators(spec).items():
        field = _field(spec, name)
        for operator in operators:
            component, schema = _operand(field, operator)
            schemas[component] = schema
    return schemas


def _field(spec: ObjectSpec, name: str) -> FieldSpec:
    """A published field, or a path's related field (`author.name`): its type types the values."""
    path = spec.paths.get(name)
    return spec.fields[name] if path is None else path.field


def _equality(spec: ObjectSpec, name: str) -> Schema:
    # Short: the document stays small (docs/openapi.md), and `filter` lists this field's operators.
    field, path = _field(spec, name), spec.paths.get(name)
    many = path is not None and path.relation.many
    related = "" if path is None else f" (any related `{path.relation.name}` record)" if many else ""
    return {
        "name": f"filter[{name}]",
        "in": "query",
        "description": f"`{name}` equals this{related}. Other operators: `filter`.",
        "schema": ref("schemas", _operand(field, "eq")[0]),
    }


def _operators(spec: ObjectSpec, fields: dict[str, tuple[str, ...]]) -> Schema:
    properties = {
        f"filter[{name}][{op}]": ref("schemas", _operand(_field(spec, name), op)[0])
        for name, operators in fields.items()
        for op in operators
        if op != "eq"
    }
    sample = next(iter(properties))
    return {
        "name": "filter",
        "in": "query",
        "description": f"Conditions with an operator, as an object of `filter[<field>][<op>]` keys, e.g. "
        f'`{{"{sample}": …}}`; each key is sent as its own query pair. {BOUNDS}',
        "style": "form",
        "explode": True,
        "schema": {"type": "object", "properties": properties},
        # Swagger UI fills a parameter with its example: a sample value per key would be a condition each.
        "example": {},
    }


def _operand(field: FieldSpec, operator: str) -> tuple[str, Schema]:
    """The component name and schema of the value `operator` takes on `field`."""
    kind = _KIND_NAMES.get(field.kind, "text")
    if Operator(operator).takes_flag:
        return "Filter.flag", flag_schema()
    if operator == Operator.BETWEEN:
        return f"Filter.{kind}.pair", query_list_schema(field, least=2, most=2)
    if Operator(operator).takes_list:
        return f"Filter.{kind}.list", query_list_schema(field, least=1, most=MAX_LIST_VALUES)
    if kind == "text":
        return "Filter.text", text_schema()
    return f"Filter.{kind}", filter_value_schema(field)
