"""Compiles a `FieldPlan` into a `FieldCheck`: type gates, one conversion, then the value checks."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any
from urllib.parse import urlsplit

from pb_headless.fields import (
    ColumnDescription,
    FieldKind,
    InvalidValue,
    json_converter,
    json_type,
    json_types,
)
from pb_headless.fields.text import UUID_TEXT, parse_date
from pb_headless.rules.grammar import SIZE_RULES, Rule
from pb_headless.rules.messages import message, options_message, size_message
from pb_headless.rules.plan import FieldPlan

# A check returns the message of its failure, or None when the value passes.
Check = Callable[[Any], "str | None"]  # a value that passed the type gates

# The characters PHP's trim() removes: Laravel treats a string of only these as empty.
BLANK = " \t\n\r\x00\x0b"
# WHATWG's definition of a valid e-mail address (what <input type=email> accepts).
EMAIL = re.compile(
    r"[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*",
    re.ASCII,
)
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*", re.ASCII)
_KIND_MESSAGE = {
    FieldKind.INTEGER: "integer",
    FieldKind.FLOAT: "numeric",
    FieldKind.DECIMAL: "numeric",
    FieldKind.BOOLEAN: "boolean",
    FieldKind.STRING: "string",
    FieldKind.DATE: "date",
    FieldKind.DATETIME: "datetime",
    FieldKind.TIME: "time",
    FieldKind.UUID: "uuid",
}


def is_empty(value: object) -> bool:
    """Laravel's notion of empty for `required`: null, a blank string, an empty array or object."""
    if isinstance(value, str):
        return not value.strip(BLANK)
    return value is None or (isinstance(value, list | dict) and not value)


@dataclass(frozen=True)
class FieldCheck:
    """Everything `validate` runs for one field, built once per object."""

    plan: FieldPlan
    gates: tuple[tuple[frozenset[str], str], ...]
    convert: Callable[[object], object]
    checks: tuple[Check, ...]

    def run(self, raw: object) -> tuple[object, list[str]]:
        """The converted value and the messages of every failed rule (none when valid)."""
        plan = self.plan
        if raw is None:
            if plan.accepts_null:
                return None, []
            return None, [message("required" if plan.present_on_create else "not_null", plan.shown_name)]
        if plan.required and is_empty(raw):
            return None, [message("required", plan.shown_name)]
        atom = json_type(raw)
        failed = [text for atoms, text in self.gates if atom not in atoms]
        if failed:
            return None, list(dict.fromkeys(failed))
        try:
            value = self.convert(raw)
        except InvalidValue:
            return None, [message(_KIND_MESSAGE.get(plan.column.kind, "string"), plan.shown_name)]
        # An implicit check and a rule can say the same thing (`String(200)` and `max:200`): once is enough.
        failed = [text for check in self.checks if (text := check(value)) is not None]
        return value, list(dict.fromkeys(failed))


def build_check(plan: FieldPlan) -> FieldCheck:
    name = plan.shown_name
    gates = [(json_types(plan.column), message(_KIND_MESSAGE.get(plan.column.kind, "string"), name))]
    for rule in plan.rules:
        atoms = plan.rule_atoms(rule)
        if atoms is not None:
            gates.append((atoms, message(rule.name, name)))
    checks = [*_implicit_checks(name, plan.column), *_option_checks(plan)]
    for rule in plan.rules:
        checks += _rule_checks(plan, rule)
    return FieldCheck(plan, tuple(gates), json_converter(plan.column), tuple(checks))


def _implicit_checks(name: str, column: ColumnDescription) -> list[Check]:
    checks: list[Check] = []
    if column.kind is FieldKind.STRING:
        # PostgreSQL refuses NUL in text; refusing it here keeps client input away from a 500.
        checks.append(_predicate(lambda value: "\x00" not in value, message("null_character", name)))
    if column.max_length is not None:
        checks.append(_size_check("max", name, (Decimal(column.max_length),)))
    if column.int_range is not None:
        checks.append(_size_check("between", name, tuple(Decimal(bound) for bound in column.int_range)))
    if column.largest_decimal is not None:
        checks.append(_precision_check(name, column))
    return checks


def _precision_check(name: str, column: ColumnDescription) -> Check:
    """NUMERIC(p, s) holds p - s digits before the point and s after; more would fail in the database."""
    largest, scale = column.largest_decimal, column.scale or 0
    assert largest is not None and column.precision is not None
    step = Decimal(1).scaleb(-scale)
    context = Context(prec=column.precision + 2)  # exact: the default 28 digits would round a wide column
    # copy_negate and copy_abs are exact; unary minus and abs() round to the context.
    too_large = size_message("between", "numeric", name, (largest.copy_negate(), largest))
    too_fine = message("decimal_places", name, scale)

    def check(value: object) -> str | None:
        if not isinstance(value, Decimal):
            return None
        if value.copy_abs() > largest:
            return too_large
        return None if value == value.quantize(step, context=context) else too_fine

    return check


def _option_checks(plan: FieldPlan) -> list[Check]:
    checks: list[Check] = []
    if plan.allowed is not None:
        allowed = _option_set(plan.allowed)
        shown = tuple(value for value in plan.allowed if value not in plan.forbidden)
        refused = options_message("in", plan.shown_name, shown)
        checks.append(_predicate(lambda value: _is_among(value, allowed), refused))
    if plan.forbidden:
        forbidden = _option_set(plan.forbidden)
        listed = options_message("not_in", plan.shown_name, plan.forbidden)
        checks.append(_predicate(lambda value: not _is_among(value, forbidden), listed))
    return checks


def _option_set(values: tuple[object, ...]) -> frozenset[tuple[type, object]]:
    # Keyed by type as well, so that True never matches an option 1 (Python has True == 1).
    return frozenset((_option_type(value), value) for value in values)


def _option_type(value: object) -> type:
    return bool if isinstance(value, bool) else str if isinstance(value, str) else object


def _is_among(value: object, options: frozenset[tuple[type, object]]) -> bool:
    try:
        return (_option_type(value), value) in options
    except TypeError:  # a list or an object from a JSON column is never one of the options
        return False


def _rule_checks(plan: FieldPlan, rule: Rule) -> list[Check]:
    if rule.name in SIZE_RULES:
        return [_size_check(rule.name, plan.shown_name, rule.numbers)]
    if rule.name not in _VALUE_RULES:
        return []  # type rules act in the gates, in/not_in in _option_checks; the rest only annotate
    text = message(rule.name, plan.shown_name)
    if rule.name == "regex":
        pattern = rule.pattern
        assert pattern is not None  # a regex rule always carries its compiled pattern
        return [_predicate(lambda value: pattern.search(value) is not None, text)]
    kind = plan.column.kind
    if rule.name == "date" and kind not in (FieldKind.DATE, FieldKind.DATETIME):
        return [_predicate(_is_date, text)]
    if rule.name == "uuid" and kind is not FieldKind.UUID:
        return [_predicate(lambda value: UUID_TEXT.fullmatch(value) is not None, text)]
    predicate = _STRING_PREDICATES.get(rule.name)
    return [] if predicate is None else [_predicate(predicate, text)]


def _predicate(holds: Callable[[Any], bool], text: str) -> Check:
    """A check that fails with `text`; string rules run only on strings (the gates saw to that)."""
    return lambda value: None if holds(value) else text


def _size_check(rule: str, name: str, bounds: tuple[Decimal, ...]) -> Check:
    low, high = {
        "min": (bounds[0], None),
        "max": (None, bounds[0]),
        "size": (bounds[0], bounds[0]),
        "between": (bounds[0], bounds[-1]),
    }[rule]
    shown = tuple(int(bound) if bound == int(bound) else bound for bound in bounds)

    def check(value: object) -> str | None:
        measure, size = _measure(value)
        if measure is None or ((low is None or size >= low) and (high is None or size <= high)):
            return None
        return size_message(rule, measure, name, shown)

    return check


def _measure(value: object) -> tuple[str | None, int | float | Decimal]:
    """What the size rules compare (Laravel): a string's length, a number's value, an array's count."""
    if isinstance(value, str):
        return "string", len(value)
    if isinstance(value, bool):
        return None, 0  # a size says nothing about true or false
    if isinstance(value, int | float | Decimal):
        return "numeric", value
    if isinstance(value, list | dict):
        return "array", len(value)
    return None, 0


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parse_date(value)
    except InvalidValue:
        return False
    return True


def _is_url(value: object) -> bool:
    if not isinstance(value, str) or any(char.isspace() or ord(char) < 32 for char in value):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError on a port that is not a number
    except ValueError:
        return False
    return bool(
        _SCHEME.fullmatch(parts.scheme) and value[len(parts.scheme) :].startswith("://") and parts.hostname
    )


def _only(categories: str, extra: str = "") -> Callable[[object], bool]:
    """Laravel's alpha rules: Unicode letters (L) and marks (M), plus digits (N) and `-_` as asked."""

    def holds(value: object) -> bool:
        return (
            isinstance(value, str)
            and bool(value)
            and all(char in extra or unicodedata.category(char)[0] in categories for char in value)
        )

    return holds


_STRING_PREDICATES: dict[str, Callable[[object], bool]] = {
    "email": lambda value: isinstance(value, str) and EMAIL.fullmatch(value) is not None,
    "url": _is_url,
    "alpha": _only("LM"),
    "alpha_num": _only("LMN"),
    "alpha_dash": _only("LMN", "-_"),
}
_VALUE_RULES = frozenset({"regex", "date", "uuid", *_STRING_PREDICATES})
