"""Compiles an object's rules once into a `Validator` that checks write bodies and describes them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import sqlalchemy as sa

from pb_headless.rules.checks import FieldCheck, build_check
from pb_headless.rules.errors import FieldRef
from pb_headless.rules.messages import message
from pb_headless.rules.plan import FieldPlan, plan_field
from pb_headless.rules.schema import body_schema, field_schema

NOT_WRITABLE = "is not writable"  # docs/writes.md, word for word


@dataclass(frozen=True)
class ValidationResult:
    """Converted values ready to write, and per-field messages (empty when the body is valid)."""

    values: dict[str, object] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def is_valid(self) -> bool:
        return not self.errors


class Validator:
    """Checks a write body against one object's columns and rules; built by `compile_rules`."""

    def __init__(self, plans: Mapping[str, FieldPlan], writable: Sequence[str]) -> None:
        self.writable: tuple[str, ...] = tuple(writable)
        self.unique_fields: tuple[str, ...] = tuple(name for name in plans if plans[name].has("unique"))
        self._plans = dict(plans)
        self._checks: dict[str, FieldCheck] = {name: build_check(plans[name]) for name in self.writable}

    def validate(self, body: Mapping[str, object], *, partial: bool) -> ValidationResult:
        """Create (`partial=False`) or PATCH (`partial=True`, only the fields sent are checked)."""
        errors = {key: [self.not_writable(key)] for key in body if key not in self._checks}
        values: dict[str, object] = {}
        for name, check in self._checks.items():
            if name in body:
                value, messages = check.run(body[name])
            elif not partial and check.plan.present_on_create:
                value, messages = None, [message("required", check.plan.shown_name)]
            else:
                continue
            if messages:
                errors[name] = messages
            else:
                values[name] = value
        return ValidationResult(values, errors)

    def not_writable(self, key: str) -> str:
        """`is not writable`, and the writable field the client most likely meant (`titel` → `title`)."""
        nearest = difflib.get_close_matches(key, self.writable, n=1, cutoff=0.75)
        return f"{NOT_WRITABLE} (did you mean '{nearest[0]}'?)" if nearest else NOT_WRITABLE

    def json_schema(self, *, partial: bool) -> dict:
        return body_schema([self._plans[name] for name in self.writable], partial=partial)

    def field_schema(self, field: str) -> dict:
        """The schema of one column's value, writable or not; KeyError for an unknown field."""
        return field_schema(self._plans[field])

    def unique_message(self, field: str) -> str:
        """The message for a `unique` field whose value is taken (the caller runs the query)."""
        plan = self._plans.get(field)
        return message("unique", plan.shown_name if plan is not None else field)

    def __repr__(self) -> str:
        return f"<Validator writable={list(self.writable)!r} unique={list(self.unique_fields)!r}>"


def compile_rules(
    object_name: str,
    columns: Mapping[str, sa.Column],
    writable: Sequence[str],
    rules: Mapping[str, str | Sequence[str]],
) -> Validator:
    """Parse and check every rule of one object up front; raises RuleError naming object, field and rule."""
    for name in list(writable) + list(rules):
        if name not in columns:
            raise FieldRef(object_name, name).error(
                f"no such column (the table has: {', '.join(sorted(columns))})"
            )
    writable_set = set(writable)
    plans = {
        name: plan_field(FieldRef(object_name, name), column, rules.get(name), writable=name in writable_set)
        for name, column in columns.items()
    }
    return Validator(plans, list(dict.fromkeys(writable)))
