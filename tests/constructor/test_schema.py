"""The SQL table a constructor table makes, and creating it on each database."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pb_headless.constructor import FIELD_TYPES, ConstructorField, ConstructorTable, create_table, table_for
from pb_headless.fields import FieldKind, describe_column

EVERY_TYPE = ConstructorTable(
    "every_type",
    "Every type",
    tuple(ConstructorField(f"f_{type_}", type_, required=type_ == "string") for type_ in FIELD_TYPES),
)


def test_a_table_has_an_id_key_its_fields_in_order_and_a_published_flag():
    table = table_for(EVERY_TYPE)
    assert [column.name for column in table.columns] == [
        "id",
        *(field.name for field in EVERY_TYPE.fields),
        "published",
    ]
    assert table.primary_key.columns.keys() == ["id"]


def test_the_published_flag_is_a_not_null_boolean_that_defaults_to_true():
    published = table_for(EVERY_TYPE).c.published
    assert isinstance(published.type, sa.Boolean)
    assert not published.nullable
    assert published.server_default is not None


def test_a_required_field_is_not_null_and_the_others_are_nullable():
    table = table_for(EVERY_TYPE)
    assert not table.c.f_string.nullable
    assert all(table.c[field.name].nullable for field in EVERY_TYPE.fields if not field.required)


@pytest.mark.parametrize(
    ("field", "kind"),
    [
        ("f_string", FieldKind.STRING),
        ("f_text", FieldKind.STRING),
        ("f_integer", FieldKind.INTEGER),
        ("f_number", FieldKind.FLOAT),
        ("f_decimal", FieldKind.DECIMAL),
        ("f_boolean", FieldKind.BOOLEAN),
        ("f_date", FieldKind.DATE),
        ("f_datetime", FieldKind.DATETIME),
        ("f_email", FieldKind.STRING),
        ("f_url", FieldKind.STRING),
    ],
)
def test_each_type_makes_a_column_the_api_reads_as_the_right_kind(field, kind):
    assert describe_column(table_for(EVERY_TYPE).c[field]).kind is kind


def test_text_like_columns_take_the_fields_length():
    table = table_for(
        ConstructorTable("t", "T", (ConstructorField("s", "string", length=80), ConstructorField("u", "url")))
    )
    assert table.c.s.type.length == 80
    assert table.c.u.type.length == 2048


async def test_create_table_makes_a_table_whose_rows_are_published_unless_told(database):
    created = await create_table(database, EVERY_TYPE)
    await create_table(database, EVERY_TYPE)  # a second time changes nothing
    await database.execute(created.insert().values(f_string="a"))
    await database.execute(created.insert().values(f_string="b", published=False))
    rows = await database.fetch_all(sa.select(created.c.f_string, created.c.published).order_by(created.c.id))
    assert [(row[0], bool(row[1])) for row in rows] == [("a", True), ("b", False)]


async def test_rows_added_by_plain_sql_are_published_by_the_database_default(database):
    await create_table(database, EVERY_TYPE)
    await database.execute("INSERT INTO every_type (f_string) VALUES ('raw')")
    assert bool(await database.fetch_val("SELECT published FROM every_type"))


async def test_table_exists_tells_a_created_table_from_a_missing_one(database):
    from pb_headless.constructor.schema import table_exists

    assert not await table_exists(database, "every_type")
    await create_table(database, EVERY_TYPE)
    assert await table_exists(database, "every_type")


async def test_create_table_moves_the_shared_version(database):
    from pb_headless.state import read_version

    before = await read_version(database)
    await create_table(database, EVERY_TYPE)
    assert await read_version(database) == before + 1
