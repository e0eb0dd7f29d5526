"""Compile-time errors: rules that do not fit their column, or that no value could satisfy."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from pb_headless.rules import RuleError, compile_rules


@pytest.mark.parametrize(
    ("type_", "rule"),
    [
        (sa.Integer(), "email"),
        (sa.Date(), "integer"),
        (sa.Boolean(), "min:1"),
        (sa.String(10), "integer"),
        (sa.String(10), "boolean"),
        (sa.String(10), "array"),
        (sa.Integer(), "regex:/^1$/"),
        (sa.DateTime(), "in:2024-01-01"),
        (sa.Uuid(), "url"),
        (sa.Date(), "max:3"),
    ],
)
def test_a_rule_that_does_not_fit_the_column_type_is_a_rule_error(one_field, type_, rule) -> None:
    expected = f"field 'field': rule '{rule}' does not fit column type {type(type_).__name__}"
    with pytest.raises(RuleError, match=re.escape(expected)):
        one_field(type_, rule)


def test_nullable_on_a_not_null_column_is_a_rule_error(one_field) -> None:
    with pytest.raises(RuleError, match="NOT NULL"):
        one_field(sa.String(10), "nullable", nullable=False)


def test_type_rules_that_cannot_both_hold_are_a_rule_error(one_field) -> None:
    with pytest.raises(RuleError, match="cannot all hold"):
        one_field(sa.JSON(), "string|integer")


def test_integer_and_numeric_together_narrow_to_integer(one_field) -> None:
    validator = one_field(sa.JSON(), "numeric|integer")
    assert validator.validate({"field": 3}, partial=True).errors == {}
    assert validator.validate({"field": 3.5}, partial=True).errors == {
        "field": ["The field field must be an integer."]
    }


def test_an_in_value_the_column_cannot_hold_is_a_rule_error(one_field) -> None:
    with pytest.raises(RuleError, match="'x' is not a value of this column"):
        one_field(sa.Integer(), "in:1,x")


def test_in_and_not_in_that_leave_no_value_are_a_rule_error(one_field) -> None:
    with pytest.raises(RuleError, match="no value satisfies"):
        one_field(sa.String(10), "in:a,b|not_in:a,b")


def test_a_fractional_or_negative_length_is_a_rule_error(one_field) -> None:
    with pytest.raises(RuleError, match="whole number"):
        one_field(sa.String(10), "max:2.5")
    with pytest.raises(RuleError, match="whole number"):
        one_field(sa.String(10), "min:-1")


def test_a_fractional_bound_is_fine_for_a_number(one_field) -> None:
    validator = one_field(sa.Float(), "max:2.5")
    assert validator.validate({"field": 2.6}, partial=True).errors == {
        "field": ["The field field must not be greater than 2.5."]
    }


def test_rules_on_a_field_that_is_not_a_column_are_a_rule_error(articles) -> None:
    with pytest.raises(RuleError, match="object 'articles', field 'titel': no such column"):
        compile_rules("articles", dict(articles.c), ["title"], {"titel": "required"})


def test_a_writable_field_that_is_not_a_column_is_a_rule_error(articles) -> None:
    with pytest.raises(RuleError, match="field 'nope': no such column"):
        compile_rules("articles", dict(articles.c), ["nope"], {})


def test_a_writable_column_of_a_type_json_cannot_carry_is_a_rule_error(one_field) -> None:
    with pytest.raises(RuleError, match="column type LargeBinary cannot be written"):
        one_field(sa.LargeBinary())


def test_an_unknown_rule_on_a_read_only_field_still_fails_at_compile_time(articles) -> None:
    with pytest.raises(RuleError, match="unknown rule 'requird'"):
        compile_rules("articles", dict(articles.c), ["title"], {"secret": "requird"})
