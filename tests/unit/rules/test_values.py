"""Implicit type checks and conversions that every writable column brings, with no rules at all."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
import sqlalchemy as sa


def check(validator, value):
    """(value, messages) for one value of the one field."""
    result = validator.validate({"field": value}, partial=True)
    return result.values.get("field"), result.errors.get("field", [])


@pytest.mark.parametrize("value", [True, False, "3", 3.5, [3], {"n": 3}])
def test_an_integer_column_refuses_anything_but_a_json_integer(one_field, value) -> None:
    assert check(one_field(sa.Integer()), value) == (None, ["The field field must be an integer."])


def test_an_integer_column_takes_an_integral_float_as_json_schema_does(one_field) -> None:
    value, errors = check(one_field(sa.Integer()), 3.0)
    assert (value, type(value), errors) == (3, int, [])


def test_an_integer_column_refuses_values_outside_its_portable_range(one_field) -> None:
    assert check(one_field(sa.SmallInteger()), 40000)[1] == [
        "The field field must be between -32768 and 32767."
    ]
    assert check(one_field(sa.Integer()), 2**31)[1] == [
        "The field field must be between -2147483648 and 2147483647."
    ]
    assert check(one_field(sa.BigInteger()), 2**31) == (2**31, [])


def test_a_numeric_column_keeps_decimal_precision_of_a_float(one_field) -> None:
    assert check(one_field(sa.Numeric(10, 2)), 19.99) == (Decimal("19.99"), [])


def test_a_numeric_column_takes_a_numeric_string_and_an_integer(one_field) -> None:
    validator = one_field(sa.Numeric(10, 2))
    assert check(validator, "19.99") == (Decimal("19.99"), [])
    assert check(validator, "-0.5") == (Decimal("-0.5"), [])
    assert check(validator, 7) == (Decimal(7), [])


@pytest.mark.parametrize(("text", "number"), [("+1", "1"), (".5", "0.5"), ("1.", "1"), ("-.25", "-0.25")])
def test_a_numeric_column_reads_a_numeric_string_as_a_query_string_does(one_field, text, number) -> None:
    assert check(one_field(sa.Numeric(10, 2)), text) == (Decimal(number), [])


@pytest.mark.parametrize("value", ["abc", "1e3", " 1", "1 ", ".", "+", "NaN", "Infinity", True, [1]])
def test_a_numeric_column_refuses_what_is_not_a_plain_number(one_field, value) -> None:
    assert check(one_field(sa.Numeric(10, 2)), value) == (None, ["The field field must be a number."])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), Decimal("NaN")])
def test_nan_and_infinity_are_refused_when_a_python_caller_passes_them(one_field, value) -> None:
    assert check(one_field(sa.Numeric(10, 2)), value)[1] == ["The field field must be a number."]
    assert check(one_field(sa.Float()), value)[1] == ["The field field must be a number."]


def test_a_numeric_column_refuses_more_digits_than_its_precision_holds(one_field) -> None:
    validator = one_field(sa.Numeric(5, 2))
    assert check(validator, 1000)[1] == ["The field field must be between -999.99 and 999.99."]
    assert check(validator, "19.999")[1] == ["The field field must not have more than 2 decimal places."]
    assert check(validator, "19.990") == (Decimal("19.990"), [])
    assert check(validator, 1e300)[1] == ["The field field must be between -999.99 and 999.99."]


def test_a_wide_numeric_column_checks_its_precision_exactly(one_field) -> None:
    validator = one_field(sa.Numeric(40, 10))
    largest = "9" * 30 + "." + "9" * 10
    assert check(validator, largest) == (Decimal(largest), [])
    assert check(validator, "1" + "0" * 30)[1] != []


def test_a_float_column_takes_numbers_only(one_field) -> None:
    assert check(one_field(sa.Float()), 2) == (2.0, [])
    assert check(one_field(sa.Float()), "2.5") == (None, ["The field field must be a number."])


@pytest.mark.parametrize("value", [1, 0, "true", "1", None])
def test_a_boolean_column_takes_only_true_or_false(one_field, value) -> None:
    validator = one_field(sa.Boolean(), nullable=False, default=False)
    expected = (
        "The field field must not be null." if value is None else "The field field must be true or false."
    )
    assert check(validator, value) == (None, [expected])
    assert check(validator, True) == (True, [])


def test_a_string_column_takes_strings_up_to_its_length(one_field) -> None:
    validator = one_field(sa.String(5))
    assert check(validator, "héllo") == ("héllo", [])
    assert check(validator, "toolong")[1] == ["The field field must not be greater than 5 characters."]
    assert check(validator, 5)[1] == ["The field field must be a string."]


def test_a_string_with_a_nul_character_is_refused(one_field) -> None:
    assert check(one_field(sa.Text()), "a\x00b")[1] == ["The field field must not contain null characters."]


def test_an_enum_column_takes_only_its_values(one_field) -> None:
    validator = one_field(sa.Enum("draft", "published", name="status"), name="status")
    result = validator.validate({"status": "gone"}, partial=True)
    assert result.errors == {"status": ["The status field must be one of: draft, published."]}


def test_a_date_column_takes_yyyy_mm_dd_only(one_field) -> None:
    validator = one_field(sa.Date())
    assert check(validator, "2024-02-29") == (dt.date(2024, 2, 29), [])
    for bad in ("2023-02-29", "20240101", "2024-W01-1", "2024-1-1", "2024-01-01T00:00:00", 20240101):
        assert check(validator, bad)[1] == ["The field field must be a valid date (YYYY-MM-DD)."], bad


def test_a_datetime_with_an_offset_is_stored_in_utc(one_field) -> None:
    value, errors = check(one_field(sa.DateTime(timezone=True)), "2024-05-01T12:30:00+02:00")
    assert (value, errors) == (dt.datetime(2024, 5, 1, 10, 30, tzinfo=dt.UTC), [])


def test_a_datetime_without_an_offset_is_utc(one_field) -> None:
    assert check(one_field(sa.DateTime(timezone=True)), "2024-05-01T12:30")[0] == dt.datetime(
        2024, 5, 1, 12, 30, tzinfo=dt.UTC
    )


def test_a_date_alone_for_a_datetime_means_midnight_utc(one_field) -> None:
    assert check(one_field(sa.DateTime(timezone=True)), "2024-05-01")[0] == dt.datetime(
        2024, 5, 1, tzinfo=dt.UTC
    )


def test_a_datetime_column_without_timezone_stores_naive_utc(one_field) -> None:
    value = check(one_field(sa.DateTime()), "2024-05-01T00:15:00.123456789-01:00")[0]
    assert value == dt.datetime(2024, 5, 1, 1, 15, 0, 123456)
    assert value.tzinfo is None


@pytest.mark.parametrize(
    "value",
    [
        "2024-05-01T25:00",
        "2024-05-01T12:30+24:00",
        "2024-05-01T12:30+01:60",
        "yesterday",
        "2024-05-01 T12:30",
        1714560000,
    ],
)
def test_a_datetime_column_refuses_what_is_not_iso_8601(one_field, value) -> None:
    assert check(one_field(sa.DateTime()), value)[1] == [
        "The field field must be a valid date and time (YYYY-MM-DDTHH:MM[:SS][+HH:MM], or YYYY-MM-DD)."
    ]


def test_a_time_column_takes_hh_mm_with_optional_seconds(one_field) -> None:
    validator = one_field(sa.Time())
    assert check(validator, "09:05") == (dt.time(9, 5), [])
    assert check(validator, "23:59:59.5") == (dt.time(23, 59, 59, 500000), [])
    assert check(validator, "24:00")[1] == ["The field field must be a valid time."]


def test_a_uuid_column_converts_to_uuid_or_canonical_text_as_the_column_wants(one_field) -> None:
    text = "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"
    assert check(one_field(sa.Uuid()), text) == (uuid.UUID(text), [])
    assert check(one_field(sa.Uuid(as_uuid=False)), text) == (text.lower(), [])
    assert check(one_field(sa.Uuid()), "a0eebc999c0b4ef8bb6d6bb9bd380a11")[1] == [
        "The field field must be a valid UUID."
    ]


def test_a_json_column_takes_any_json_value(one_field) -> None:
    validator = one_field(sa.JSON())
    for value in ({"a": [1, {"b": None}]}, [1, "x"], "text", 1.5, False):
        assert check(validator, value) == (value, [])
