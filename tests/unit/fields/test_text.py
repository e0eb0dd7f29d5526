"""The text grammar of each kind of value, shared by query strings and JSON bodies."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

from pb_headless.fields.text import (
    LARGEST_INTEGER,
    SMALLEST_INTEGER,
    InvalidValue,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_flag,
    parse_float,
    parse_integer,
    parse_time,
    parse_uuid,
)

UTC = dt.UTC


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("+42", 42),
        ("-7", -7),
        ("007", 7),
        (str(LARGEST_INTEGER), LARGEST_INTEGER),
        (str(SMALLEST_INTEGER), SMALLEST_INTEGER),
    ],
)
def test_an_integer_is_ascii_digits_with_an_optional_sign_within_64_bits(text: str, value: int) -> None:
    assert parse_integer(text) == value


@pytest.mark.parametrize("text", ["", "1.0", "1e3", "١٢", " 1", "0x10", str(LARGEST_INTEGER + 1), "9" * 5000])
def test_anything_else_is_not_an_integer(text: str) -> None:
    with pytest.raises(InvalidValue):
        parse_integer(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("19.99", "19.99"), ("+1", "1"), (".5", "0.5"), ("1.", "1"), ("-.25", "-0.25"), ("007.10", "7.10")],
)
def test_a_decimal_is_written_as_people_write_numbers(text: str, value: str) -> None:
    assert parse_decimal(text) == Decimal(value)


@pytest.mark.parametrize("text", ["", ".", "+", "-", "1e3", "1.2.3", " 1", "NaN", "Infinity", "1,5"])
def test_a_decimal_has_no_exponent_no_spaces_and_no_special_values(text: str) -> None:
    with pytest.raises(InvalidValue):
        parse_decimal(text)


def test_a_float_takes_the_decimal_grammar_and_a_short_exponent() -> None:
    assert [parse_float(text) for text in ("4.5", ".5", "+1", "1e3", "2.5E-2")] == [
        4.5,
        0.5,
        1.0,
        1000.0,
        0.025,
    ]
    for text in ("1e1000", "inf", "nan", "1e", "e3"):
        with pytest.raises(InvalidValue):
            parse_float(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("TRUE", True), ("1", True), ("false", False), ("False", False), ("0", False)],
)
def test_a_flag_is_true_false_1_or_0_in_any_case(text: str, value: bool) -> None:
    assert parse_flag(text) is value


@pytest.mark.parametrize("text", ["yes", "on", "no", "off", "", "2", "t"])
def test_setting_words_are_not_flags(text: str) -> None:
    with pytest.raises(InvalidValue):
        parse_flag(text)


def test_a_date_is_yyyy_mm_dd_and_a_real_day() -> None:
    assert parse_date("2024-02-29") == dt.date(2024, 2, 29)
    for text in ("2023-02-29", "20240101", "2024-1-1", "2024-01-01T00:00"):
        with pytest.raises(InvalidValue):
            parse_date(text)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2024-05-01", dt.datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T10:30", dt.datetime(2024, 5, 1, 10, 30, tzinfo=UTC)),
        ("2024-05-01 10:30:15", dt.datetime(2024, 5, 1, 10, 30, 15, tzinfo=UTC)),
        ("2024-05-01t10:30:00z", dt.datetime(2024, 5, 1, 10, 30, tzinfo=UTC)),
        ("2024-05-01T10:30:00+02:00", dt.datetime(2024, 5, 1, 8, 30, tzinfo=UTC)),
        ("2024-05-01T10:30:00-0130", dt.datetime(2024, 5, 1, 12, 0, tzinfo=UTC)),
        ("2024-05-01T10:30:00,5Z", dt.datetime(2024, 5, 1, 10, 30, 0, 500000, tzinfo=UTC)),
        ("2024-05-01T10:30:00.123456789Z", dt.datetime(2024, 5, 1, 10, 30, 0, 123456, tzinfo=UTC)),
    ],
)
def test_a_datetime_is_iso_8601_read_as_an_aware_utc_moment(text: str, moment: dt.datetime) -> None:
    parsed = parse_datetime(text)
    assert parsed == moment
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01T10",
        "2024-05-01T1030",
        "2024-05-01T10:30+02",
        "2024-05-01T25:00",
        "2024-05-01T12:30+24:00",
        "2024-05-01T12:30+01:60",
        "0001-01-01T00:00+01:00",
        "2024-02-30",
        "yesterday",
        "2024-05-01 T12:30",
    ],
)
def test_a_datetime_in_another_form_is_refused_by_both_entry_points(text: str) -> None:
    # One grammar: a query string used to take the hour alone, compact times and hour-only offsets,
    # which a JSON body refused; both now read ISO 8601's extended form only.
    with pytest.raises(InvalidValue):
        parse_datetime(text)


def test_a_time_is_hh_mm_with_optional_seconds_and_fraction() -> None:
    assert parse_time("09:05") == dt.time(9, 5)
    assert parse_time("23:59:59.5") == dt.time(23, 59, 59, 500000)
    with pytest.raises(InvalidValue):
        parse_time("24:00")


def test_a_uuid_is_the_canonical_hyphenated_form_in_any_case() -> None:
    text = "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"
    assert parse_uuid(text) == uuid.UUID(text)
    for other in (
        "a0eebc999c0b4ef8bb6d6bb9bd380a11",
        "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
        "urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99",
    ):
        with pytest.raises(InvalidValue):
            parse_uuid(other)
