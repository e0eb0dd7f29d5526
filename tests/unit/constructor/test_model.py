"""Table definitions and API-tab settings check themselves when they are made."""

from __future__ import annotations

import pytest

from pb_headless.constructor import FIELD_TYPES, ApiTab, ConstructorError, ConstructorField, ConstructorTable


def test_the_field_types_are_the_documented_ten():
    assert FIELD_TYPES == (
        "string",
        "text",
        "integer",
        "number",
        "decimal",
        "boolean",
        "date",
        "datetime",
        "email",
        "url",
    )


def test_an_unknown_field_type_is_refused_with_the_known_ones_listed():
    with pytest.raises(ConstructorError, match=r"unknown type 'money'.*string, text"):
        ConstructorField("price", "money")


@pytest.mark.parametrize("name", ["", "1st", "with space", "дата", "a" * 65, "semi;colon"])
def test_a_field_name_that_is_not_a_portable_column_name_is_refused(name):
    with pytest.raises(ConstructorError, match="field name"):
        ConstructorField(name, "string")


@pytest.mark.parametrize("name", ["id", "published", "ID", "Published"])
def test_the_columns_every_constructor_table_has_cannot_be_defined_again(name):
    with pytest.raises(ConstructorError, match="every constructor table has already"):
        ConstructorField(name, "string")


@pytest.mark.parametrize("type_", ["integer", "number", "decimal", "boolean", "date", "datetime"])
def test_only_text_like_fields_take_a_length(type_):
    with pytest.raises(ConstructorError, match="has no length"):
        ConstructorField("f", type_, length=10)


@pytest.mark.parametrize("length", [0, -5, True, 2.5])
def test_a_length_is_a_positive_whole_number(length):
    with pytest.raises(ConstructorError, match="positive whole number"):
        ConstructorField("f", "string", length=length)


def test_a_string_longer_than_a_portable_varchar_must_be_a_text_field():
    with pytest.raises(ConstructorError, match="use a text field"):
        ConstructorField("f", "string", length=5000)
    assert ConstructorField("f", "text", length=100_000).max_length == 100_000


def test_the_maximum_length_falls_back_to_the_columns_own():
    assert ConstructorField("f", "string").max_length == 255
    assert ConstructorField("f", "email").max_length == 255
    assert ConstructorField("f", "url").max_length == 2048
    assert ConstructorField("f", "text").max_length is None
    assert ConstructorField("f", "integer").max_length is None


def test_a_table_name_must_be_a_portable_sql_name():
    with pytest.raises(ConstructorError, match="table name"):
        ConstructorTable("Новости", "Новости")


def test_a_table_cannot_define_one_field_twice_in_any_case():
    with pytest.raises(ConstructorError, match="defined twice"):
        ConstructorTable(
            "news", "News", (ConstructorField("title", "string"), ConstructorField("Title", "text"))
        )


def test_a_table_takes_its_fields_as_any_sequence_and_keeps_their_order():
    table = ConstructorTable("news", "News", [ConstructorField("b", "text"), ConstructorField("a", "string")])
    assert [field.name for field in table.fields] == ["b", "a"]
    assert table.field("a") == ConstructorField("a", "string")
    assert table.field("missing") is None


def test_a_default_api_tab_is_switched_off_read_only_and_without_fields():
    tab = ApiTab()
    assert (tab.enabled, tab.fields, tab.operations, tab.url_name) == (False, (), ("list", "show"), None)
    assert not tab.writes


def test_an_api_tab_normalises_its_lists_and_orders_operations():
    tab = ApiTab(
        enabled=1,
        fields=["title", "body", "title"],
        operations=["update", "list", "show"],
        filterable="title, body",
    )
    assert tab.enabled is True
    assert tab.fields == ("title", "body")
    assert tab.operations == ("list", "show", "update")
    assert tab.filterable == ("title", "body")
    assert tab.writes


def test_an_unknown_operation_or_none_at_all_is_refused():
    with pytest.raises(ConstructorError, match="operations"):
        ApiTab(operations=["list", "purge"])
    with pytest.raises(ConstructorError, match="operations"):
        ApiTab(operations=[])


def test_a_blank_url_name_means_the_transliterated_one():
    assert ApiTab(url_name="  ").url_name is None
    assert ApiTab(url_name=" news ").url_name == "news"


@pytest.mark.parametrize("url_name", ["company news", "новости", "-news", "a" * 101, "news/1"])
def test_a_url_name_that_is_not_an_object_name_is_refused(url_name):
    with pytest.raises(ConstructorError, match="URL name"):
        ApiTab(url_name=url_name)


def test_a_list_of_something_other_than_names_is_refused():
    with pytest.raises(ConstructorError, match="fields"):
        ApiTab(fields=[1, 2])
    with pytest.raises(ConstructorError, match="writable"):
        ApiTab(writable=5)
