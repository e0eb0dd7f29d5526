"""Rendering database values as the JSON values docs/query.md promises."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

import orjson
import pytest
import sqlalchemy as sa

from pb_headless.query.render import render_record, render_value
from pb_headless.registry.spec import FieldSpec, ObjectSpec


def field_of(column_type: Any) -> FieldSpec:
    return FieldSpec.of(sa.Column("value", column_type))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("19.99"), "19.99"),
        (Decimal("20.00"), "20.00"),
        (Decimal("1E+2"), "100"),
        (Decimal("-0.50"), "-0.50"),
    ],
)
def test_decimals_render_as_strings_keeping_their_scale(value: Decimal, expected: str) -> None:
    assert render_value(field_of(sa.Numeric(10, 2)), value) == expected


def test_a_decimal_column_read_back_as_a_float_gets_the_column_scale() -> None:
    assert render_value(field_of(sa.Numeric(10, 2)), 20.0) == "20.00"
    assert render_value(field_of(sa.Numeric()), 0.1) == "0.1"
    assert render_value(field_of(sa.Numeric(10, 2)), 7) == "7"


def test_floats_render_as_numbers_even_when_the_driver_gives_decimals() -> None:
    assert render_value(field_of(sa.Float()), 4.5) == 4.5
    assert render_value(field_of(sa.Float()), Decimal("4.5")) == 4.5


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime(2024, 5, 1, 12, 0), "2024-05-01T12:00:00+00:00"),
        (datetime(2024, 5, 1, 12, 0, 0, 123000), "2024-05-01T12:00:00.123000+00:00"),
        (datetime(2024, 5, 1, 12, 0, tzinfo=UTC), "2024-05-01T12:00:00+00:00"),
        (datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2))), "2024-05-01T14:00:00+02:00"),
    ],
)
def test_datetimes_render_as_iso_8601_with_an_offset_naive_meaning_utc(
    value: datetime, expected: str
) -> None:
    assert render_value(field_of(sa.DateTime()), value) == expected


def test_dates_render_as_year_month_day() -> None:
    assert render_value(field_of(sa.Date()), date(2024, 5, 1)) == "2024-05-01"


@pytest.mark.parametrize(("value", "expected"), [(1, True), (0, False), (True, True), (False, False)])
def test_booleans_stored_as_integers_render_as_true_or_false(value: Any, expected: bool) -> None:
    assert render_value(field_of(sa.Boolean()), value) is expected


def test_null_stays_null_whatever_the_kind() -> None:
    for column_type in (sa.Boolean(), sa.Numeric(10, 2), sa.DateTime(), sa.String()):
        assert render_value(field_of(column_type), None) is None


def test_other_values_become_json_friendly() -> None:
    text = field_of(sa.String())
    assert render_value(text, UUID(int=1)) == "00000000-0000-0000-0000-000000000001"
    assert render_value(text, b"\x00\xff") == "AP8="
    assert render_value(text, time(10, 30)) == "10:30:00"
    assert render_value(text, timedelta(minutes=1)) == 60.0
    assert render_value(field_of(sa.JSON()), {"tags": ["a"]}) == {"tags": ["a"]}
    assert render_value(field_of(sa.Integer()), 7) == 7


def test_a_record_renders_its_fields_in_the_given_order(article_spec: ObjectSpec) -> None:
    row = {
        "id": 1,
        "title": "T",
        "price": Decimal("19.99"),
        "featured": 1,
        "secret": "never",
        "created_at": datetime(2024, 5, 1),
    }
    fields = [article_spec.fields[name] for name in ("id", "title", "price", "featured", "created_at")]
    record = render_record(row, fields)
    assert list(record) == ["id", "title", "price", "featured", "created_at"]
    assert orjson.dumps(record) == (
        b'{"id":1,"title":"T","price":"19.99","featured":true,"created_at":"2024-05-01T00:00:00+00:00"}'
    )
