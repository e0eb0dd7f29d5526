"""Joins a column and its parsed rules into a `FieldPlan`, the one source of both checks and schema."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from pb_headless.fields import ColumnDescription, FieldKind, InvalidValue, describe_column, json_types
from pb_headless.fields.values import ARRAY, BOOLEAN, INTEGER, NUMBER, STRING, json_converter
from pb_headless.rules.errors import FieldRef
from pb_headless.rules.grammar import OPTION_RULES, SIZE_RULES, Rule, parse_rules

_NUMERIC_KINDS = frozenset({FieldKind.INTEGER, FieldKind.FLOAT, FieldKind.DECIMAL})
_STRING_LIKE = frozenset({FieldKind.STRING, FieldKind.JSON})
# A number in a rule string (`in:1,2.5`): plain decimal notation, as the rule grammar writes numbers.
_OPTION_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?", re.ASCII)

# Which column kinds each rule makes sense on; anything else is a declaration mistake.
_FITS: dict[str, frozenset[str] | None] = {
    "required": None,
    "nullable": None,
    "unique": None,
    "string": frozenset(
        {FieldKind.STRING, FieldKind.JSON, FieldKind.UUID, FieldKind.DATE, FieldKind.DATETIME, FieldKind.TIME}
    ),
    "integer": _NUMERIC_KINDS | {FieldKind.JSON},
    "numeric": _NUMERIC_KINDS | {FieldKind.JSON},
    "boolean": frozenset({FieldKind.BOOLEAN, FieldKind.JSON}),
    "array": frozenset({FieldKind.JSON}),
    "email": _STRING_LIKE,
    "url": _STRING_LIKE,
    "regex": _STRING_LIKE,
    "alpha": _STRING_LIKE,
    "alpha_num": _STRING_LIKE,
    "alpha_dash": _STRING_LIKE,
    "uuid": _STRING_LIKE | {FieldKind.UUID},
    "date": _STRING_LIKE | {FieldKind.DATE, FieldKind.DATETIME},
    **dict.fromkeys(SIZE_RULES, _NUMERIC_KINDS | _STRING_LIKE),
    **dict.fromkeys(OPTION_RULES, _NUMERIC_KINDS | _STRING_LIKE | {FieldKind.DATE}),
}

# The JSON types a rule lets through; a field accepts what its column and all its rules agree on.
_RULE_ATOMS = {
    "string": frozenset({STRING}),
    "integer": frozenset({INTEGER}),
    "numeric": NUMBER,
    "boolean": frozenset({BOOLEAN}),
    "array": frozenset({ARRAY}),
    **dict.fromkeys(
        ("email", "url", "uuid", "date", "regex", "alpha", "alpha_num", "alpha_dash"), frozenset({STRING})
    ),
}


@dataclass(frozen=True)
class FieldPlan:
    """One field: its column, its rules, and what they add up to."""

    name: str
    column: ColumnDescription
    rules: tuple[Rule, ...]
    atoms: frozenset[str]
    allowed: tuple[object, ...] | None = None
    forbidden: tuple[object, ...] = ()
    label: str | None = None  # the column's `info["label"]` (a constructor field's label), for people

    @property
    def shown_name(self) -> str:
        """How messages name the field: its label when it has one (`Цена`), else its name."""
        return self.label or self.name

    @property
    def required(self) -> bool:
        """The explicit `required` rule: present on create, and never empty."""
        return self.has("required")

    @property
    def present_on_create(self) -> bool:
        """A create must send it: `required`, or a NOT NULL column nothing else would fill."""
        return self.required or not (self.column.nullable or self.column.has_default)

    @property
    def accepts_null(self) -> bool:
        return self.column.nullable and not self.required

    def has(self, name: str) -> bool:
        return any(rule.name == name for rule in self.rules)

    def named(self, *names: str) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if rule.name in names)

    def rule_atoms(self, rule: Rule) -> frozenset[str] | None:
        """The JSON types `rule` lets through, or None when it does not constrain the type."""
        if rule.name == "numeric" and self.column.kind is FieldKind.DECIMAL:
            return NUMBER | {STRING}  # a Numeric column takes "19.99" as a number
        return _RULE_ATOMS.get(rule.name)


def plan_field(
    ref: FieldRef, column: sa.Column, spec: str | Sequence[str] | None, *, writable: bool
) -> FieldPlan:
    described = describe_column(column)
    type_name = type(column.type).__name__
    if writable and described.kind is FieldKind.OTHER:
        raise ref.error(
            f"column type {type_name} cannot be written through the API (take it out of 'writable')"
        )
    rules = parse_rules(spec, ref) if spec is not None else ()
    for rule in rules:
        _check_fit(ref, rule, described, type_name)
    plan = FieldPlan(ref.field, described, rules, json_types(described))
    atoms = json_types(described)
    for rule in rules:
        atoms &= plan.rule_atoms(rule) or atoms
    if not atoms:
        typed = "', '".join(rule.text for rule in rules if plan.rule_atoms(rule) is not None)
        raise ref.error(f"rules '{typed}' cannot all hold for one value (column type {type_name})")
    return FieldPlan(
        ref.field, described, rules, atoms, *_options(ref, described, rules), label=column_label(column)
    )


def column_label(column: sa.Column) -> str | None:
    """A human label set on the column as `info={"label": ...}` (the constructor sets its field labels)."""
    label = column.info.get("label") if column.info else None
    return (label.strip() or None) if isinstance(label, str) else None


def _check_fit(ref: FieldRef, rule: Rule, column: ColumnDescription, type_name: str) -> None:
    kinds = _FITS[rule.name]
    if kinds is not None and column.kind not in kinds:
        raise ref.error(f"rule {rule.text!r} does not fit column type {type_name}")
    if rule.name == "nullable" and not column.nullable:
        raise ref.error(f"rule {rule.text!r} does not fit a NOT NULL column")
    lengths = rule.name in SIZE_RULES and column.kind in _STRING_LIKE
    if lengths and any(number < 0 or number != int(number) for number in rule.numbers):
        raise ref.error(f"rule {rule.text!r}: a length or a count is a whole number, 0 or more")


def _options(ref: FieldRef, column: ColumnDescription, rules: tuple[Rule, ...]) -> tuple[tuple | None, tuple]:
    """The values `in` rules (and an Enum column) admit, in order, and those `not_in` rules refuse."""
    allowed: list[object] | None = list(column.choices) if column.choices is not None else None
    forbidden: list[object] = []
    for rule in rules:
        if rule.name not in OPTION_RULES:
            continue
        try:
            values = [_option_value(column, option) for option in rule.options]
        except InvalidValue as error:
            raise ref.error(f"rule {rule.text!r}: {error.args[0]!r} is not a value of this column") from None
        if rule.name == "not_in":
            forbidden += [value for value in values if value not in forbidden]
        else:
            allowed = values if allowed is None else [value for value in allowed if value in values]
    if allowed is not None and not [value for value in allowed if value not in forbidden]:
        raise ref.error("no value satisfies every 'in' and 'not_in' rule of the field")
    return (None if allowed is None else tuple(dict.fromkeys(allowed))), tuple(forbidden)


def _option_value(column: ColumnDescription, text: str) -> object:
    """An in/not_in value from a rule string, as the column stores it; raises InvalidValue."""
    if column.kind in (FieldKind.INTEGER, FieldKind.FLOAT):
        if not _OPTION_NUMBER.fullmatch(text) or (column.kind is FieldKind.INTEGER and "." in text):
            raise InvalidValue(text)
        return int(text) if column.kind is FieldKind.INTEGER else float(text)
    return json_converter(column)(text)
