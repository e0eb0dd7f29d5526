"""Explicit rules: formats, sizes, options and patterns, with Laravel's wording."""

from __future__ import annotations

from decimal import Decimal

import pytest
import sqlalchemy as sa


def errors(validator, value) -> list[str]:
    return validator.validate({"field": value}, partial=True).errors.get("field", [])


@pytest.mark.parametrize("value", ["a@b.co", "first.last+tag@example.com", "user@localhost"])
def test_email_accepts_addresses_a_browser_would(one_field, value) -> None:
    assert errors(one_field(sa.String(100), "email"), value) == []


@pytest.mark.parametrize("value", ["", "plain", "a@", "@b.co", "a b@c.co", "a@-b.co", "a@b..co"])
def test_email_refuses_what_is_not_an_address(one_field, value) -> None:
    assert errors(one_field(sa.String(100), "email"), value) == [
        "The field field must be a valid email address."
    ]


@pytest.mark.parametrize(
    "value", ["https://example.com", "http://localhost:8000/a?b=c#d", "ftp://files.example"]
)
def test_url_accepts_absolute_urls_with_a_host(one_field, value) -> None:
    assert errors(one_field(sa.String(100), "url"), value) == []


@pytest.mark.parametrize(
    "value",
    ["example.com", "https://", "https://exa mple.com", "mailto:a@b.co", "http://host:port/", "/relative"],
)
def test_url_refuses_what_is_not_an_absolute_url(one_field, value) -> None:
    assert errors(one_field(sa.String(100), "url"), value) == ["The field field must be a valid URL."]


def test_uuid_on_a_string_column_checks_the_text_form(one_field) -> None:
    validator = one_field(sa.String(36), "uuid")
    assert errors(validator, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11") == []
    assert errors(validator, "a0eebc99") == ["The field field must be a valid UUID."]


def test_date_on_a_string_column_checks_yyyy_mm_dd_and_keeps_the_string(one_field) -> None:
    validator = one_field(sa.String(10), "date")
    assert validator.validate({"field": "2024-01-31"}, partial=True).values == {"field": "2024-01-31"}
    assert errors(validator, "2024-01-32") == ["The field field must be a valid date (YYYY-MM-DD)."]


def test_alpha_rules_follow_laravel_unicode_letters_and_marks(one_field) -> None:
    assert errors(one_field(sa.String(20), "alpha"), "Новости") == []
    assert errors(one_field(sa.String(20), "alpha"), "abc1") == ["The field field must only contain letters."]
    assert errors(one_field(sa.String(20), "alpha_num"), "abc1") == []
    assert errors(one_field(sa.String(20), "alpha_num"), "abc-1") == [
        "The field field must only contain letters and numbers."
    ]
    assert errors(one_field(sa.String(20), "alpha_dash"), "abc-1_x") == []
    assert errors(one_field(sa.String(20), "alpha_dash"), "abc 1") == [
        "The field field must only contain letters, numbers, dashes, and underscores."
    ]


def test_regex_searches_like_preg_match(one_field) -> None:
    validator = one_field(sa.String(20), "regex:/[0-9]{3}/")
    assert errors(validator, "ab123cd") == []
    assert errors(validator, "ab12") == ["The field field format is invalid."]


def test_a_regex_with_a_pipe_is_applied_whole(one_field) -> None:
    validator = one_field(sa.String(20), "regex:/^(cat|dog)$/|max:3")
    assert errors(validator, "dog") == []
    assert errors(validator, "cow") == ["The field field format is invalid."]


def test_size_rules_measure_string_length(one_field) -> None:
    assert errors(one_field(sa.Text(), "min:3"), "ab") == ["The field field must be at least 3 characters."]
    assert errors(one_field(sa.Text(), "max:3"), "abcd") == [
        "The field field must not be greater than 3 characters."
    ]
    assert errors(one_field(sa.Text(), "between:2,3"), "a") == [
        "The field field must be between 2 and 3 characters."
    ]
    assert errors(one_field(sa.Text(), "size:2"), "abc") == ["The field field must be 2 characters."]
    assert errors(one_field(sa.Text(), "size:2"), "ab") == []


def test_size_rules_measure_a_numbers_value(one_field) -> None:
    assert errors(one_field(sa.Integer(), "min:3"), 2) == ["The field field must be at least 3."]
    assert errors(one_field(sa.Integer(), "max:3"), 4) == ["The field field must not be greater than 3."]
    assert errors(one_field(sa.Numeric(6, 2), "between:1,2.5"), "2.51") == [
        "The field field must be between 1 and 2.5."
    ]
    assert errors(one_field(sa.Float(), "size:2"), 2.0) == []


def test_size_rules_measure_an_arrays_count(one_field) -> None:
    validator = one_field(sa.JSON(), "array|max:2")
    assert errors(validator, [1, 2, 3]) == ["The field field must not have more than 2 items."]
    assert errors(one_field(sa.JSON(), "min:2"), [1]) == ["The field field must have at least 2 items."]
    assert errors(one_field(sa.JSON(), "size:1"), {"a": 1, "b": 2}) == [
        "The field field must contain 1 items."
    ]


def test_array_means_a_json_array_not_an_object(one_field) -> None:
    assert errors(one_field(sa.JSON(), "array"), {"a": 1}) == ["The field field must be an array."]


def test_type_rules_narrow_a_json_column(one_field) -> None:
    assert errors(one_field(sa.JSON(), "string"), 1) == ["The field field must be a string."]
    assert errors(one_field(sa.JSON(), "boolean"), "true") == ["The field field must be true or false."]
    assert errors(one_field(sa.JSON(), "numeric"), "1") == ["The field field must be a number."]
    assert errors(one_field(sa.JSON(), "email"), 5) == ["The field field must be a valid email address."]


def test_integer_on_a_numeric_column_refuses_fractions_and_strings(one_field) -> None:
    validator = one_field(sa.Numeric(10, 2), "integer")
    assert validator.validate({"field": 4}, partial=True).values == {"field": Decimal(4)}
    assert errors(validator, 4.5) == ["The field field must be an integer."]
    assert errors(validator, "4") == ["The field field must be an integer."]


def test_numeric_on_a_numeric_column_still_takes_numeric_strings(one_field) -> None:
    assert errors(one_field(sa.Numeric(10, 2), "numeric"), "4.25") == []


def test_a_type_failure_reports_each_failed_type_rule_once(one_field) -> None:
    assert errors(one_field(sa.Integer(), "integer|numeric"), "x") == [
        "The field field must be an integer.",
        "The field field must be a number.",
    ]


def test_in_compares_values_as_the_column_stores_them(one_field) -> None:
    validator = one_field(sa.Integer(), "in:1,2,3")
    assert errors(validator, 2) == []
    assert errors(validator, 2.0) == []
    assert errors(validator, 4) == ["The field field must be one of: 1, 2, 3."]
    assert errors(one_field(sa.Numeric(6, 2), "in:1.5,2"), "1.50") == []
    assert errors(one_field(sa.Date(), "in:2024-01-01"), "2024-01-02") == [
        "The field field must be one of: 2024-01-01."
    ]


def test_not_in_refuses_the_listed_values(one_field) -> None:
    validator = one_field(sa.String(10), "not_in:admin,root", name="login")
    assert validator.validate({"login": "guest"}, partial=True).errors == {}
    assert validator.validate({"login": "root"}, partial=True).errors == {
        "login": ["The login field must not be one of: admin, root."]
    }


def test_in_on_a_json_column_never_matches_an_array_or_true_for_one(one_field) -> None:
    validator = one_field(sa.JSON(), "in:1,a")
    assert errors(validator, ["a"]) == ["The field field must be one of: 1, a."]
    assert errors(validator, 1) == ["The field field must be one of: 1, a."]
    assert errors(validator, "1") == []


def test_an_enum_column_and_an_in_rule_both_apply(one_field) -> None:
    validator = one_field(sa.Enum("a", "b", "c", name="letters"), "in:b,c,d")
    assert errors(validator, "a") == ["The field field must be one of: b, c."]
    assert errors(validator, "b") == []


def test_an_in_rule_names_the_values_it_allows_without_those_not_in_refuses(one_field) -> None:
    validator = one_field(sa.String(20), "in:news,guides,reviews|not_in:guides")
    assert errors(validator, "gossip") == ["The field field must be one of: news, reviews."]
    assert errors(validator, "guides") == ["The field field must not be one of: guides."]
