"""The two entry points of a value, query-string text and JSON: one grammar, deliberate differences."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
import sqlalchemy as sa

from pb_headless.fields import (
    ConversionError,
    InvalidValue,
    describe_column,
    from_query,
    json_converter,
    json_type,
    json_types,
)

UTC = dt.UTC


def column(type_: sa.types.TypeEngine):
    return describe_column(sa.Column("x", type_))


def from_json(type_: sa.types.TypeEngine, value: object) -> object:
    """A JSON value as a write converts it: refused by its type first, then converted."""
    description = column(type_)
    if json_type(value) not in json_types(description):
        raise InvalidValue(value)
    return json_converter(description)(value)


# -- one grammar -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["19.99", "+1", ".5", "1.", "-0.25", "1e3", "abc", " 1", ".", ""])
def test_a_decimal_text_reads_alike_in_a_query_string_and_in_a_json_body(text: str) -> None:
    def outcome(read):
        try:
            return read()
        except InvalidValue:
            return "refused"

    from_text = outcome(lambda: from_query(column(sa.Numeric(10, 2)), text))
    # Query text is trimmed first (an unencoded `+` arrives as a space); JSON text is taken as sent.
    assert from_text == outcome(lambda: from_json(sa.Numeric(10, 2), text.strip() or text))


@pytest.mark.parametrize("text", ["2024-05-01T10:30:00+02:00", "2024-05-01", "2024-05-01T10", "x"])
def test_a_datetime_text_reads_alike_in_a_query_string_and_in_a_json_body(text: str) -> None:
    def outcome(read):
        try:
            return read()
        except InvalidValue:
            return "refused"

    assert outcome(lambda: from_query(column(sa.DateTime(timezone=True)), text)) == outcome(
        lambda: from_json(sa.DateTime(timezone=True), text)
    )


def test_a_uuid_reads_alike_in_a_query_string_and_in_a_json_body() -> None:
    text = "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"
    assert from_query(column(sa.Uuid()), text) == from_json(sa.Uuid(), text) == uuid.UUID(text)
    assert from_query(column(sa.Uuid(as_uuid=False)), text) == from_json(sa.Uuid(as_uuid=False), text)
    with pytest.raises(InvalidValue):
        from_query(column(sa.Uuid()), "a0eebc999c0b4ef8bb6d6bb9bd380a11")
    with pytest.raises(InvalidValue):
        from_json(sa.Uuid(), "a0eebc999c0b4ef8bb6d6bb9bd380a11")


# -- deliberate differences --------------------------------------------------------------------------


def test_a_query_boolean_is_also_1_or_0_but_a_json_boolean_is_only_true_or_false() -> None:
    assert from_query(column(sa.Boolean()), "1") is True
    assert from_query(column(sa.Boolean()), "False") is False
    for value in (1, 0, "true"):
        with pytest.raises(InvalidValue):
            from_json(sa.Boolean(), value)
    assert from_json(sa.Boolean(), True) is True


def test_json_true_is_refused_for_an_integer_field_and_so_is_a_numeric_string() -> None:
    for value in (True, "3", 3.5):
        with pytest.raises(InvalidValue):
            from_json(sa.Integer(), value)
    assert from_json(sa.Integer(), 3.0) == 3
    assert from_query(column(sa.Integer()), "3") == 3


def test_query_text_is_trimmed_and_json_text_is_not() -> None:
    assert from_query(column(sa.Integer()), " 7 ") == 7
    assert from_query(column(sa.Date()), " 2024-05-01") == dt.date(2024, 5, 1)
    with pytest.raises(InvalidValue):
        from_json(sa.Date(), " 2024-05-01")


def test_a_query_datetime_reads_a_space_before_the_offset_as_the_plus_it_was() -> None:
    assert from_query(column(sa.DateTime()), "2024-05-01T10:00:00 02:00") == dt.datetime(
        2024, 5, 1, 8, tzinfo=UTC
    )
    with pytest.raises(InvalidValue):
        from_json(sa.DateTime(), "2024-05-01T10:00:00 02:00")


def test_a_query_datetime_stays_aware_and_a_json_one_is_naive_for_a_column_without_timezone() -> None:
    text = "2024-05-01T10:00:00+02:00"
    assert from_query(column(sa.DateTime()), text).tzinfo is UTC
    assert from_json(sa.DateTime(), text) == dt.datetime(2024, 5, 1, 8)
    assert from_json(sa.DateTime(timezone=True), text) == dt.datetime(2024, 5, 1, 8, tzinfo=UTC)


def test_a_json_decimal_keeps_the_digits_of_a_float_and_refuses_nan() -> None:
    assert from_json(sa.Numeric(10, 2), 19.99) == Decimal("19.99")
    for value in (float("nan"), float("inf"), Decimal("NaN")):
        with pytest.raises(InvalidValue):
            json_converter(column(sa.Numeric(10, 2)))(value)


# -- query messages ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "message"),
    [
        (sa.Integer(), "must be an integer"),
        (sa.Float(), "must be a number"),
        (sa.Numeric(10, 2), "must be a number"),
        (sa.Boolean(), "must be true, false, 1 or 0"),
        (sa.Date(), "must be a date (YYYY-MM-DD)"),
        (sa.DateTime(), "must be a date-time (ISO 8601, e.g. 2024-05-01T12:00:00+00:00)"),
        (sa.Uuid(), "must be a UUID"),
    ],
)
def test_a_query_value_that_does_not_convert_says_what_it_must_be(type_, message: str) -> None:
    with pytest.raises(ConversionError) as raised:
        from_query(column(type_), "nonsense")
    assert str(raised.value) == message


def test_query_text_for_an_enum_must_be_one_of_its_labels() -> None:
    status = column(sa.Enum("draft", "live", name="status"))
    assert from_query(status, "live") == "live"
    with pytest.raises(ConversionError, match="must be one of: draft, live"):
        from_query(status, "gone")


def test_query_text_with_a_nul_character_is_refused() -> None:
    with pytest.raises(ConversionError, match="must not contain NUL characters"):
        from_query(column(sa.String(10)), "a\x00b")


def test_time_and_other_types_are_compared_as_the_text_a_query_sends() -> None:
    assert from_query(column(sa.Time()), "10:00") == "10:00"
    assert from_query(column(sa.LargeBinary()), "abc") == "abc"
