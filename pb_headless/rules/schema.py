"""Describes a field plan as JSON Schema (the OpenAPI 3.1 dialect), agreeing with what `validate` accepts."""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Sequence
from decimal import Decimal

from pb_headless.fields import ColumnDescription, FieldKind
from pb_headless.fields.text import TIME_TEXT
from pb_headless.fields.values import ARRAY, BOOLEAN, FRACTION, INTEGER, OBJECT, STRING
from pb_headless.rules.grammar import SIZE_RULES, Rule
from pb_headless.rules.plan import FieldPlan

# The same characters as checks.BLANK: a required string must hold one character outside them.
NOT_BLANK = "[^ \\t\\n\\r\\u0000\\u000b]"
NO_NUL = "^[^\\u0000]*$"
_FORMATS = {"email": "email", "url": "uri", "uuid": "uuid", "date": "date"}
_KIND_FORMATS = {FieldKind.DATE: "date", FieldKind.DATETIME: "date-time", FieldKind.UUID: "uuid"}
_DATETIME_NOTE = "ISO 8601. Without an offset the time is UTC; a date alone means midnight UTC."
_BOUNDS = {  # the keywords each size rule sets, per measure: (lower, upper)
    "string": ("minLength", "maxLength"),
    "numeric": ("minimum", "maximum"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


def body_schema(plans: Sequence[FieldPlan], *, partial: bool) -> dict:
    """The request body: only writable fields; a create names the fields it must send."""
    schema: dict = {
        "type": "object",
        "properties": {plan.name: field_schema(plan) for plan in plans},
        "additionalProperties": False,
    }
    required = [plan.name for plan in plans if plan.present_on_create]
    if required and not partial:
        schema["required"] = required
    return schema


def field_schema(plan: FieldPlan) -> dict:
    schema: dict = {"title": plan.label} if plan.label else {}
    types = _type_names(plan.atoms) + (["null"] if plan.accepts_null else [])
    if len(types) < 6:  # all six JSON types is any value: say nothing
        schema["type"] = types[0] if len(types) == 1 else types
    _kind_keywords(schema, plan.column)
    for rule in plan.rules:
        _rule_keywords(schema, plan, rule)
    if plan.column.kind is FieldKind.DECIMAL:
        _unsigned_when_not_negative(schema)
    if plan.allowed is not None:
        schema["enum"] = _json_values(plan.allowed) + ([None] if plan.accepts_null else [])
    if plan.forbidden:
        schema["not"] = {"enum": _json_values(plan.forbidden)}
    if plan.required:
        _non_empty(schema, plan)
    return schema


def _type_names(atoms: frozenset[str]) -> list[str]:
    names = ["number"] if FRACTION in atoms else ["integer"] if INTEGER in atoms else []
    return names + [name for name in (STRING, BOOLEAN, ARRAY, OBJECT) if name in atoms]


def _kind_keywords(schema: dict, column: ColumnDescription) -> None:
    if column.kind in _KIND_FORMATS:
        schema["format"] = _KIND_FORMATS[column.kind]
    if column.kind is FieldKind.DATETIME:
        schema["description"] = _DATETIME_NOTE
    if column.kind is FieldKind.TIME:
        schema["pattern"] = f"^{TIME_TEXT.pattern}$"
    if column.kind is FieldKind.STRING:
        _put(schema, "pattern", NO_NUL)  # the validator refuses NUL, which PostgreSQL cannot store
    if column.max_length is not None:
        _bound(schema, "maxLength", column.max_length, upper=True)
    if column.int_range is not None:
        _bound(schema, "minimum", column.int_range[0], upper=False)
        _bound(schema, "maximum", column.int_range[1], upper=True)
    if column.kind is FieldKind.DECIMAL:
        _decimal_keywords(schema, column)


def _decimal_keywords(schema: dict, column: ColumnDescription) -> None:
    """A Numeric column takes a number or a numeric string; the pattern bounds the string form's digits.

    The pattern states the plain spelling (`-19.99`); the validator also reads `+1`, `.5` and `1.`
    (`pb_headless.fields.text.DECIMAL_TEXT`, the grammar query strings share), which the document
    does not advertise: what it admits is accepted, and no client needs the other spellings.
    """
    precision, scale, largest = column.precision, column.scale or 0, column.largest_decimal
    if precision is None or largest is None:
        _put(schema, "pattern", "^-?[0-9]+(\\.[0-9]+)?$")
        return
    whole = f"0*[0-9]{{1,{precision - scale}}}" if precision > scale else "0+"
    fraction = f"(\\.[0-9]{{1,{scale}}}0*)?" if scale else "(\\.0+)?"
    _put(schema, "pattern", f"^-?{whole}{fraction}$")
    _bound(schema, "minimum", _json_number(largest.copy_negate()), upper=False)
    _bound(schema, "maximum", _json_number(largest), upper=True)
    # A number with more places than the scale is refused (`decimal_places`); `multipleOf` says so for the
    # number form, as the pattern does for the string form.
    schema["multipleOf"] = _json_number(Decimal(1).scaleb(-scale))


def _unsigned_when_not_negative(schema: dict) -> None:
    """`minimum` binds numbers only; with a lower bound of 0 or more, the string form loses its sign too
    (`min:0` refuses "-5" as it refuses -5). Other bounds of the string form are not expressible."""
    if schema.get("minimum", -1) >= 0 and str(schema.get("pattern", "")).startswith("^-?"):
        schema["pattern"] = "^" + schema["pattern"][3:]


def _rule_keywords(schema: dict, plan: FieldPlan, rule: Rule) -> None:
    if rule.name in SIZE_RULES:
        _size_keywords(schema, plan, rule)
    elif rule.name in _FORMATS and plan.column.kind in (FieldKind.STRING, FieldKind.JSON):
        _put(schema, "format", _FORMATS[rule.name])
    elif rule.name == "regex" and is_portable_pattern(rule):
        _put(schema, "pattern", rule.source)


def _size_keywords(schema: dict, plan: FieldPlan, rule: Rule) -> None:
    if plan.column.kind is FieldKind.JSON:
        measures: Sequence[str] = ("string", "numeric", "array", "object")
    else:
        measures = ("string",) if plan.column.kind is FieldKind.STRING else ("numeric",)
    low, high = {"min": (0, None), "max": (None, 0), "size": (0, 0), "between": (0, -1)}[rule.name]
    for measure in measures:
        lower, upper = _BOUNDS[measure]
        if low is not None:
            _bound(schema, lower, _json_number(rule.numbers[low]), upper=False)
        if high is not None:
            _bound(schema, upper, _json_number(rule.numbers[high]), upper=True)


def _non_empty(schema: dict, plan: FieldPlan) -> None:
    """`required` also refuses an empty value: a blank string, [] and {}."""
    if STRING in plan.atoms and plan.column.kind in (FieldKind.STRING, FieldKind.JSON):
        _put(schema, "pattern", NOT_BLANK)
    if ARRAY in plan.atoms:
        _bound(schema, "minItems", 1, upper=False)
    if OBJECT in plan.atoms:
        _bound(schema, "minProperties", 1, upper=False)


def _put(schema: dict, key: str, value: object) -> None:
    """Set a keyword; a second, different value of it (two patterns, two formats) goes under allOf."""
    if key not in schema:
        schema[key] = value
    elif schema[key] != value and {key: value} not in schema.setdefault("allOf", []):
        schema["allOf"].append({key: value})


def _bound(schema: dict, key: str, value: int | float, *, upper: bool) -> None:
    """Set a bound keyword, keeping the tighter one when several rules set it."""
    if key in schema:
        value = min(schema[key], value) if upper else max(schema[key], value)
    schema[key] = value


def _json_number(number: Decimal | int) -> int | float:
    return int(number) if number == int(number) else float(number)


def _json_values(values: tuple[object, ...]) -> list[object]:
    """Options as JSON; a Decimal option is offered both as a number and as its string."""
    out: list[object] = []
    for value in values:
        if isinstance(value, Decimal):
            out += [_json_number(value), str(value)]
        else:
            out.append(value.isoformat() if isinstance(value, dt.date) else value)
    return out


# Escapes that mean the same in Python's re and in ECMAScript (JSON Schema's pattern dialect).
_PORTABLE_ESCAPES = frozenset("dDwWsSbBnrtfv0\\/.*+?()[]{}|^$-" + string.digits)
_PORTABLE_GROUPS = ("(?:", "(?=", "(?!", "(?<=", "(?<!")


def is_portable_pattern(rule: Rule) -> bool:
    """Whether a regex rule's pattern reads the same in ECMAScript; a conservative yes."""
    if rule.flags not in ("", "u"):
        return False
    source, index, previous = rule.source, 0, ""
    while index < len(source):
        char = source[index]
        if char == "\\":
            escaped = source[index + 1 : index + 2]
            if escaped not in _PORTABLE_ESCAPES and not _is_hex_escape(source, index):
                return False
            index, previous = index + 2, ""
            continue
        if source.startswith("(?", index) and not source.startswith(_PORTABLE_GROUPS, index):
            return False  # named groups, inline flags, atomic groups, comments: Python only
        if char == "+" and previous in ("*", "+", "?", "}"):
            return False  # a possessive quantifier
        index, previous = index + 1, char
    return True


def _is_hex_escape(source: str, index: int) -> bool:
    width = {"x": 2, "u": 4}.get(source[index + 1 : index + 2])
    digits = source[index + 2 : index + 2 + width] if width else ""
    return bool(width) and len(digits) == width and all(char in string.hexdigits for char in digits)
