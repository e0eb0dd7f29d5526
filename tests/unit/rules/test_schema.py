"""JSON Schema of write bodies: its shape, and its agreement with `validate`."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from openapi_spec_validator import validate as validate_openapi

from pb_headless.rules.errors import FieldRef
from pb_headless.rules.grammar import parse_rules
from pb_headless.rules.schema import NO_NUL, NOT_BLANK, is_portable_pattern


def test_a_create_body_schema_names_required_fields_and_refuses_others(article_validator) -> None:
    schema = article_validator.json_schema(partial=False)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["title"]
    assert list(schema["properties"]) == list(article_validator.writable)


def test_a_patch_body_schema_requires_nothing(article_validator) -> None:
    assert "required" not in article_validator.json_schema(partial=True)


def test_a_required_string_is_a_non_blank_string_up_to_its_length(article_validator) -> None:
    assert article_validator.field_schema("title") == {
        "type": "string",
        "pattern": NO_NUL,  # refused by the validator too: PostgreSQL cannot store it
        "maxLength": 200,
        "allOf": [{"pattern": NOT_BLANK}],
    }


def test_a_nullable_field_adds_null_to_its_type_and_to_its_enum(article_validator) -> None:
    assert article_validator.field_schema("status") == {
        "type": ["string", "null"],
        "pattern": NO_NUL,
        "maxLength": 20,
        "enum": ["draft", "published", None],
    }


def test_a_numeric_column_is_a_number_or_a_numeric_string_within_its_precision(article_validator) -> None:
    assert article_validator.field_schema("price") == {
        "type": ["number", "string", "null"],
        "pattern": r"^-?0*[0-9]{1,8}(\.[0-9]{1,2}0*)?$",
        "minimum": -99999999.99,
        "maximum": 99999999.99,
        "multipleOf": 0.01,  # no more places than the scale
    }


def test_an_integer_column_has_its_range_and_its_rules_bounds(article_validator) -> None:
    assert article_validator.field_schema("qty") == {
        "type": ["integer", "null"],
        "minimum": 0,
        "maximum": 2**31 - 1,
    }


def test_dates_and_datetimes_carry_their_formats(article_validator) -> None:
    assert article_validator.field_schema("published_on") == {"type": ["string", "null"], "format": "date"}
    starts_at = article_validator.field_schema("starts_at")
    assert (starts_at["type"], starts_at["format"]) == (["string", "null"], "date-time")
    assert "UTC" in starts_at["description"]


def test_a_nullable_json_column_accepts_any_value(article_validator) -> None:
    assert article_validator.field_schema("extra") == {}


def test_a_not_null_boolean_is_just_a_boolean(article_validator) -> None:
    assert article_validator.field_schema("published") == {"type": "boolean"}


def test_a_read_only_field_still_has_a_schema_and_an_unknown_one_raises(article_validator) -> None:
    assert article_validator.field_schema("secret") == {
        "type": ["string", "null"],
        "pattern": NO_NUL,
        "maxLength": 50,
    }
    with pytest.raises(KeyError):
        article_validator.field_schema("nope")


@pytest.mark.parametrize(
    ("rule", "keyword", "value"),
    [
        ("email", "format", "email"),
        ("url", "format", "uri"),
        ("uuid", "format", "uuid"),
        ("date", "format", "date"),
        ("regex:/^[a-z]+$/", "allOf", [{"pattern": "^[a-z]+$"}]),
        ("min:2", "minLength", 2),
        ("size:4", "maxLength", 4),
        ("not_in:root", "not", {"enum": ["root"]}),
    ],
)
def test_string_rules_map_to_json_schema_keywords(one_field, rule, keyword, value) -> None:
    assert one_field(sa.String(100), rule).field_schema("field")[keyword] == value


def test_a_second_pattern_goes_under_all_of(one_field) -> None:
    schema = one_field(sa.String(100), "required|regex:/^a/|regex:/b$/").field_schema("field")
    assert schema["pattern"] == NO_NUL
    assert schema["allOf"] == [{"pattern": "^a"}, {"pattern": "b$"}, {"pattern": NOT_BLANK}]


def test_a_regex_that_ecmascript_reads_differently_is_left_out(one_field) -> None:
    for rule in ("regex:/(?P<x>a)/", r"regex:/\Aa\Z/", "regex:/a/i", "regex:/a++/"):
        schema = one_field(sa.String(10), rule).field_schema("field")
        assert (schema["pattern"], "allOf" in schema) == (NO_NUL, False), rule


@pytest.mark.parametrize(
    ("source", "portable"),
    [
        (r"^[a-z0-9_-]+$", True),
        (r"^\d{3}-\d{4}$", True),
        (r"(?:a|b)(?=c)", True),
        (r"\u00e9\x41", True),
        (r"(?i)a", False),
        (r"\Z", False),
        (r"(?#c)", False),
        (r"a*+", False),
        (r"(?>a)", False),
        (r"a{2}+", False),
    ],
)
def test_portable_patterns_are_told_from_python_only_ones(source, portable) -> None:
    (rule,) = parse_rules(f"regex:/{source}/", FieldRef("o", "f"))
    assert is_portable_pattern(rule) is portable


def test_a_json_column_size_rule_constrains_every_measurable_type(one_field) -> None:
    assert one_field(sa.JSON(), "min:2").field_schema("field") == {
        "minLength": 2,
        "minimum": 2,
        "minItems": 2,
        "minProperties": 2,
    }


def test_a_numeric_in_rule_offers_the_number_and_its_string(one_field) -> None:
    assert one_field(sa.Numeric(6, 2), "in:1.5", nullable=False).field_schema("field")["enum"] == [1.5, "1.5"]


def test_the_body_schema_is_valid_in_an_openapi_3_1_document(article_validator) -> None:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/articles": {
                "post": {
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": article_validator.json_schema(partial=False)}
                        }
                    },
                    "responses": {"201": {"description": "created"}},
                }
            }
        },
    }
    validate_openapi(document)


def test_time_and_uuid_columns_describe_their_text_forms(one_field) -> None:
    assert one_field(sa.Time(), nullable=False, default="00:00").field_schema("field") == {
        "type": "string",
        "pattern": r"^([01][0-9]|2[0-3]):([0-5][0-9])(?::([0-5][0-9])(?:\.([0-9]+))?)?$",
    }
    assert one_field(sa.Uuid()).field_schema("field") == {"type": ["string", "null"], "format": "uuid"}


@pytest.mark.parametrize(
    "value", ["2024-05-01T12:30:00Z", "2024-05-01t12:30:00.5+02:00", "2024-05-01 12:30:00-01:00"]
)
def test_every_rfc_3339_date_time_the_schema_announces_is_accepted(one_field, value) -> None:
    assert one_field(sa.DateTime(timezone=True)).validate({"field": value}, partial=True).errors == {}
