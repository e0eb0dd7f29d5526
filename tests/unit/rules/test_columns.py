"""Column kinds: the implicit checks and the implicit `required` a column brings."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from pb_headless.rules.columns import describe_column


def kind_of(type_: sa.types.TypeEngine, **options: object):
    return describe_column(sa.Column("x", type_, **options))


def test_string_columns_carry_their_length_as_a_maximum() -> None:
    assert (kind_of(sa.String(200)).name, kind_of(sa.String(200)).max_length) == ("string", 200)
    assert kind_of(sa.Text()).max_length is None


def test_an_enum_column_is_a_string_limited_to_its_values() -> None:
    kind = kind_of(sa.Enum("draft", "published", name="status"))
    assert (kind.name, kind.choices) == ("string", ("draft", "published"))


def test_integer_columns_get_the_portable_range_of_their_size() -> None:
    assert kind_of(sa.SmallInteger()).int_range == (-32768, 32767)
    assert kind_of(sa.Integer()).int_range == (-(2**31), 2**31 - 1)
    assert kind_of(sa.BigInteger()).int_range == (-(2**63), 2**63 - 1)


def test_float_and_numeric_are_told_apart() -> None:
    assert kind_of(sa.Float()).name == "float"
    assert kind_of(sa.Double()).name == "float"
    numeric = kind_of(sa.Numeric(10, 2))
    assert (numeric.name, numeric.precision, numeric.scale) == ("decimal", 10, 2)


def test_numeric_with_a_precision_and_no_scale_has_scale_zero_as_in_sql() -> None:
    assert kind_of(sa.Numeric(10)).scale == 0


def test_dialect_types_read_as_their_generic_kind() -> None:
    assert kind_of(postgresql.JSONB()).name == "json"
    assert kind_of(postgresql.UUID()).name == "uuid"
    assert kind_of(sa.DateTime(timezone=True)).timezone is True


def test_types_with_no_json_form_are_unsupported() -> None:
    assert kind_of(sa.LargeBinary()).name == "unsupported"
    assert kind_of(sa.Interval()).name == "unsupported"


def test_a_type_decorator_is_validated_as_the_type_it_stores() -> None:
    class Lowercase(sa.types.TypeDecorator):
        impl = sa.String(30)
        cache_ok = True

    assert (kind_of(Lowercase()).name, kind_of(Lowercase()).max_length) == ("string", 30)


def test_a_column_with_a_default_or_server_default_has_a_default() -> None:
    assert kind_of(sa.String(5), nullable=False, default="x").has_default
    assert kind_of(sa.String(5), nullable=False, server_default="x").has_default
    assert not kind_of(sa.String(5), nullable=False).has_default


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
