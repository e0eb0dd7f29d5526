"""Validating write bodies: presence, null, unknown keys, and collecting every failure."""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa

from pb_headless.rules import ValidationResult, compile_rules


def test_a_valid_create_returns_converted_values_and_no_errors(article_validator) -> None:
    result = article_validator.validate({"title": "Hello", "price": 19.99, "qty": 2}, partial=False)
    assert result == ValidationResult(
        values={"title": "Hello", "price": Decimal("19.99"), "qty": 2}, errors={}
    )


def test_a_key_that_is_not_writable_is_reported_as_not_writable(article_validator) -> None:
    result = article_validator.validate({"title": "Hello", "secret": "x", "id": 7}, partial=False)
    assert result.errors == {"secret": ["is not writable"], "id": ["is not writable"]}


def test_an_unknown_key_is_reported_as_not_writable(article_validator) -> None:
    assert article_validator.validate({"nope": 1}, partial=True).errors == {"nope": ["is not writable"]}


def test_every_failure_is_collected_not_only_the_first(article_validator) -> None:
    result = article_validator.validate({"qty": -1, "status": "gone", "secret": 1}, partial=False)
    assert result.errors == {
        "secret": ["is not writable"],
        "title": ["The title field is required."],
        "qty": ["The qty field must be at least 0."],
        "status": ["The status field must be one of: draft, published."],
    }


def test_a_field_with_several_failed_rules_lists_every_message(one_field) -> None:
    validator = one_field(sa.String(50), "min:5|alpha|regex:/^x/", name="code")
    assert validator.validate({"code": "ab1"}, partial=True).errors == {
        "code": [
            "The code field must be at least 5 characters.",
            "The code field must only contain letters.",
            "The code field format is invalid.",
        ]
    }


def test_a_required_field_missing_from_a_create_fails(article_validator) -> None:
    assert article_validator.validate({}, partial=False).errors == {"title": ["The title field is required."]}


def test_a_required_field_missing_from_a_patch_is_fine(article_validator) -> None:
    assert article_validator.validate({"qty": 1}, partial=True) == ValidationResult({"qty": 1}, {})


def test_an_empty_patch_is_valid_and_changes_nothing(article_validator) -> None:
    assert article_validator.validate({}, partial=True) == ValidationResult({}, {})


def test_required_field_present_but_empty_fails_on_patch(article_validator) -> None:
    for empty in ("", "   ", "\t\n", None):
        assert article_validator.validate({"title": empty}, partial=True).errors == {
            "title": ["The title field is required."]
        }


def test_a_non_breaking_space_is_not_empty_as_in_laravel(one_field) -> None:
    validator = one_field(sa.String(10), "required")
    assert validator.validate({"field": "\u00a0"}, partial=True).errors == {}


def test_an_empty_array_or_object_fails_required(one_field) -> None:
    validator = one_field(sa.JSON(), "required")
    assert validator.validate({"field": []}, partial=True).errors == {
        "field": ["The field field is required."]
    }
    assert validator.validate({"field": {}}, partial=True).errors == {
        "field": ["The field field is required."]
    }
    assert validator.validate({"field": [0]}, partial=True).errors == {}


def test_a_not_null_column_without_a_default_is_required_on_create(one_field) -> None:
    validator = one_field(sa.String(10), nullable=False)
    assert validator.validate({}, partial=False).errors == {"field": ["The field field is required."]}
    assert validator.validate({}, partial=True).errors == {}


def test_an_implicitly_required_string_may_be_empty_since_the_database_takes_it(one_field) -> None:
    validator = one_field(sa.String(10), nullable=False)
    assert validator.validate({"field": ""}, partial=False) == ValidationResult({"field": ""}, {})


def test_a_not_null_column_with_a_default_is_not_required(one_field) -> None:
    assert (
        one_field(sa.String(10), nullable=False, server_default="x").validate({}, partial=False).errors == {}
    )
    assert one_field(sa.Boolean(), nullable=False, default=True).validate({}, partial=False).errors == {}


def test_null_for_a_nullable_column_is_accepted_as_none(one_field) -> None:
    validator = one_field(sa.Integer(), "min:1")
    assert validator.validate({"field": None}, partial=True) == ValidationResult({"field": None}, {})


def test_null_for_a_required_field_fails_even_when_the_column_is_nullable(one_field) -> None:
    validator = one_field(sa.Integer(), "required")
    assert validator.validate({"field": None}, partial=False).errors == {
        "field": ["The field field is required."]
    }


def test_null_for_a_not_null_column_with_a_default_fails(one_field) -> None:
    validator = one_field(sa.Integer(), nullable=False, server_default="0")
    assert validator.validate({"field": None}, partial=True).errors == {
        "field": ["The field field must not be null."]
    }


def test_underscores_in_a_field_name_read_as_spaces_in_messages(one_field) -> None:
    validator = one_field(sa.Integer(), name="max_items")
    assert validator.validate({"max_items": "x"}, partial=True).errors == {
        "max_items": ["The max items field must be an integer."]
    }


def test_values_hold_only_the_fields_that_passed(article_validator) -> None:
    result = article_validator.validate({"title": "Hi", "qty": "x"}, partial=True)
    assert result.values == {"title": "Hi"}
    assert not result.is_valid


def test_unique_fields_are_recorded_for_the_caller(article_validator) -> None:
    assert article_validator.unique_fields == ("slug",)
    assert article_validator.unique_message("slug") == "The slug has already been taken."


def test_unique_does_not_change_what_validate_accepts(article_validator) -> None:
    assert article_validator.validate({"slug": "hello-world"}, partial=True).errors == {}


def test_writable_keeps_the_declared_order(article_validator) -> None:
    assert article_validator.writable[:3] == ("title", "slug", "body")


def test_rules_on_a_read_only_field_do_not_make_it_writable(articles) -> None:
    validator = compile_rules("articles", dict(articles.c), ["title"], {"secret": "required"})
    assert validator.validate({"title": "x"}, partial=False).errors == {}
