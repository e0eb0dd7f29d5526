"""The rule engine's public surface, pinned so that a change to it shows up in review."""

from __future__ import annotations

import dataclasses

import pb_headless.rules as rules


def test_the_package_exports_exactly_its_public_names() -> None:
    assert sorted(rules.__all__) == ["RuleError", "ValidationResult", "Validator", "compile_rules"]


def test_rule_error_is_a_value_error() -> None:
    assert issubclass(rules.RuleError, ValueError)


def test_a_validation_result_is_frozen() -> None:
    assert dataclasses.fields(rules.ValidationResult)[0].name == "values"
    assert rules.ValidationResult.__dataclass_params__.frozen  # type: ignore[attr-defined]
