"""Field kinds: one description per column, read by the registry, the query, the rules and OpenAPI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql

import pb_headless.fields as fields_package
from pb_headless.fields import FieldKind, describe_column


def described(type_: sa.types.TypeEngine, **options: object):
    return describe_column(sa.Column("x", type_, **options))


def test_a_field_kind_compares_equal_to_its_old_string() -> None:
    assert FieldKind.DATETIME == "datetime"
    assert {"decimal": 1}[FieldKind.DECIMAL] == 1


def test_string_columns_carry_their_length_as_a_maximum() -> None:
    assert (described(sa.String(200)).kind, described(sa.String(200)).max_length) == (FieldKind.STRING, 200)
    assert described(sa.Text()).max_length is None


def test_an_enum_column_is_a_string_limited_to_its_values() -> None:
    enum = described(sa.Enum("draft", "published", name="status"))
    assert (enum.kind, enum.choices) == (FieldKind.STRING, ("draft", "published"))
    assert not enum.is_plain_text
    assert described(sa.String(10)).is_plain_text


def test_integer_columns_get_the_portable_range_of_their_size() -> None:
    assert described(sa.SmallInteger()).int_range == (-32768, 32767)
    assert described(sa.Integer()).int_range == (-(2**31), 2**31 - 1)
    assert described(sa.BigInteger()).int_range == (-(2**63), 2**63 - 1)


def test_float_and_numeric_are_told_apart() -> None:
    assert described(sa.Float()).kind is FieldKind.FLOAT
    assert described(sa.Double()).kind is FieldKind.FLOAT
    numeric = described(sa.Numeric(10, 2))
    assert (numeric.kind, numeric.precision, numeric.scale) == (FieldKind.DECIMAL, 10, 2)


def test_numeric_with_a_precision_and_no_scale_has_scale_zero_as_in_sql() -> None:
    assert described(sa.Numeric(10)).scale == 0
    assert described(sa.Numeric()).scale is None


def test_the_largest_decimal_is_spelled_out_exactly_even_for_a_wide_column() -> None:
    assert str(described(sa.Numeric(5, 2)).largest_decimal) == "999.99"
    assert str(described(sa.Numeric(40, 10)).largest_decimal) == "9" * 30 + "." + "9" * 10


def test_dialect_types_read_as_their_generic_kind() -> None:
    assert described(postgresql.JSONB()).kind is FieldKind.JSON
    assert described(postgresql.UUID()).kind is FieldKind.UUID
    assert described(sa.DateTime(timezone=True)).timezone is True
    assert described(sa.DateTime()).timezone is False


def test_a_uuid_column_says_whether_its_python_value_is_a_uuid_or_its_text() -> None:
    assert described(sa.Uuid()).as_uuid is True
    assert described(sa.Uuid(as_uuid=False)).as_uuid is False


def test_mariadb_boolean_reflected_as_tinyint_1_is_a_boolean_and_a_wider_tinyint_an_integer() -> None:
    assert described(mysql.TINYINT(display_width=1)).kind is FieldKind.BOOLEAN
    assert described(mysql.TINYINT(display_width=4)).kind is FieldKind.INTEGER


def test_dates_and_times_are_kinds_of_their_own() -> None:
    assert described(sa.Date()).kind is FieldKind.DATE
    assert described(sa.DateTime()).kind is FieldKind.DATETIME
    assert described(sa.Time()).kind is FieldKind.TIME


def test_types_with_no_json_form_are_other() -> None:
    assert described(sa.LargeBinary()).kind is FieldKind.OTHER
    assert described(sa.Interval()).kind is FieldKind.OTHER
    assert described(sa.types.NullType()).kind is FieldKind.OTHER


def test_a_query_reads_text_uuid_time_and_other_types_as_text_and_json_as_incomparable() -> None:
    textual = {kind for kind in FieldKind if kind.is_textual}
    assert textual == {FieldKind.STRING, FieldKind.UUID, FieldKind.TIME, FieldKind.OTHER}
    assert [kind for kind in FieldKind if not kind.is_comparable] == [FieldKind.JSON]


def test_a_type_decorator_is_described_as_the_type_it_stores() -> None:
    class Lowercase(sa.types.TypeDecorator):
        impl = sa.String(30)
        cache_ok = True

    class Cents(sa.types.TypeDecorator):
        impl = sa.Integer
        cache_ok = True

    assert (described(Lowercase()).kind, described(Lowercase()).max_length) == (FieldKind.STRING, 30)
    assert described(Cents()).kind is FieldKind.INTEGER


def test_a_column_with_a_default_or_server_default_has_a_default() -> None:
    assert described(sa.String(5), nullable=False, default="x").has_default
    assert described(sa.String(5), nullable=False, server_default="x").has_default
    assert not described(sa.String(5), nullable=False).has_default


def test_the_autoincrement_primary_key_has_a_default_but_a_composite_key_part_does_not() -> None:
    single = sa.Table("a", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True))
    composite = sa.Table(
        "b",
        sa.MetaData(),
        sa.Column("x", sa.Integer, primary_key=True),
        sa.Column("y", sa.Integer, primary_key=True),
    )
    assert describe_column(single.c.id).has_default
    assert not describe_column(composite.c.x).has_default


def test_a_column_on_a_table_is_described_alike_each_time() -> None:
    table = sa.Table(
        "c",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("price", sa.Numeric(10, 2)),
    )
    assert describe_column(table.c.price) == describe_column(table.c.price)


@pytest.mark.parametrize("module", ["kinds", "text", "values"])
def test_the_fields_package_does_no_io_and_knows_no_http_nor_the_rest_of_the_library(module: str) -> None:
    source = Path(fields_package.__file__).with_name(f"{module}.py").read_text()
    nodes = list(ast.walk(ast.parse(source)))
    imported = {alias.name for node in nodes if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in nodes if isinstance(node, ast.ImportFrom)}
    ours = {name for name in imported if name.startswith("pb_headless")}
    assert ours <= {"pb_headless.fields.kinds", "pb_headless.fields.text"}
    assert not {name.split(".")[0] for name in imported} & {"starlette", "databases", "asyncio", "socket"}
