"""Each rule of docs/constructor.md, without a database."""

from __future__ import annotations

import pytest

from pb_headless.constructor import (
    ApiTab,
    ConstructorField,
    ConstructorTable,
    declaration_for,
    rules_for,
    unpublished_reason,
    url_name_for,
)
from pb_headless.registry.compile import compile_objects
from pb_headless.registry.source import Source

NEWS = ConstructorTable(
    "site_news",
    "Новости компании",
    (
        ConstructorField("title", "string", required=True, searchable=True, length=200),
        ConstructorField("body", "text", searchable=True),
        ConstructorField("views", "integer"),
        ConstructorField("author_email", "email", searchable=True),
        ConstructorField("secret", "string", searchable=True),
    ),
)


def publish(**tab: object):
    return declaration_for(NEWS, ApiTab(**tab))  # type: ignore[arg-type]


def compile_one(declaration):
    """The object as the registry compiles it."""
    return compile_objects({declaration.name: declaration}, {declaration.name: declaration.table}, {})[
        declaration.name
    ]


# -- Switch ------------------------------------------------------------------------------------
def test_with_the_switch_off_the_table_is_not_published_whatever_is_ticked():
    assert publish(enabled=False, fields=["title", "body"]) is None


def test_the_switch_with_a_ticked_field_publishes_the_table():
    name, declaration = publish(enabled=True, fields=["title"])
    assert name == "novosti_kompanii"
    assert declaration.is_published


# -- Field ticking -----------------------------------------------------------------------------
def test_the_ticked_fields_are_the_published_fields_in_the_tables_order():
    _, declaration = publish(enabled=True, fields=["views", "title"])
    assert declaration.fields == ("title", "views")


def test_the_primary_key_is_published_with_the_ticked_fields():
    _, declaration = publish(enabled=True, fields=["title"])
    spec = compile_one(declaration)
    assert list(spec.fields) == ["id", "title"]


def test_an_unticked_field_is_not_published():
    _, declaration = publish(enabled=True, fields=["title", "body"])
    assert "secret" not in declaration.fields


def test_a_ticked_name_the_table_no_longer_defines_is_dropped():
    _, declaration = publish(enabled=True, fields=["title", "removed_field"])
    assert declaration.fields == ("title",)


# -- No fields ticked --------------------------------------------------------------------------
def test_no_ticked_field_leaves_the_table_unpublished_even_with_the_switch_on():
    assert publish(enabled=True, fields=[]) is None


def test_ticking_only_fields_the_table_does_not_define_publishes_nothing():
    assert publish(enabled=True, fields=["gone", "id", "published"]) is None


def test_the_reason_a_table_is_not_published_is_told_in_the_owners_words():
    assert unpublished_reason(NEWS, ApiTab(fields=("title",))) == "the API switch is off"
    assert "no field is ticked" in unpublished_reason(NEWS, ApiTab(enabled=True))
    assert unpublished_reason(NEWS, ApiTab(enabled=True, fields=("title",))) is None


# -- Operations --------------------------------------------------------------------------------
def test_operations_are_read_only_by_default():
    _, declaration = publish(enabled=True, fields=["title"])
    assert declaration.operations == {"list", "show"}
    assert declaration.writable == ()
    assert declaration.rules == {}


@pytest.mark.parametrize("added", [["create"], ["update"], ["delete"], ["create", "update", "delete"]])
def test_write_operations_are_served_only_once_added(added):
    _, declaration = publish(enabled=True, fields=["title"], operations=["list", "show", *added])
    assert declaration.operations == {"list", "show", *added}


def test_with_a_write_operation_the_ticked_fields_are_writable_by_default():
    _, declaration = publish(enabled=True, fields=["title", "body"], operations=["list", "show", "create"])
    assert declaration.writable == ("title", "body")


def test_chosen_writable_fields_may_include_published_but_never_the_key_or_an_unknown_field():
    _, declaration = publish(
        enabled=True,
        fields=["title"],
        operations=["list", "show", "create"],
        writable=["title", "secret", "published", "id", "gone"],
    )
    assert declaration.writable == ("title", "secret", "published")


def test_chosen_writable_fields_are_ignored_while_the_object_is_read_only():
    _, declaration = publish(enabled=True, fields=["title"], writable=["title"])
    assert declaration.writable == ()


# -- Search ------------------------------------------------------------------------------------
def test_search_runs_across_the_published_fields_marked_searchable():
    _, declaration = publish(enabled=True, fields=["title", "views", "author_email"])
    assert declaration.searchable == ("title", "author_email")


def test_a_searchable_field_that_is_not_ticked_is_not_searched():
    _, declaration = publish(enabled=True, fields=["views"])
    assert declaration.searchable == ()


# -- Filter and sort whitelists ----------------------------------------------------------------
def test_filters_and_sorting_default_to_the_published_fields_and_the_key():
    _, declaration = publish(enabled=True, fields=["title", "views"])
    assert declaration.filterable == ("id", "title", "views")
    assert declaration.sortable == ("id", "title", "views")


def test_chosen_filter_and_sort_fields_are_kept_to_the_published_ones():
    _, declaration = publish(
        enabled=True, fields=["title", "views"], filterable=["views", "secret"], sortable=[]
    )
    assert declaration.filterable == ("views",)
    assert declaration.sortable == ()


# -- Validation --------------------------------------------------------------------------------
def test_required_fields_become_required_rules_on_write():
    _, declaration = publish(enabled=True, fields=["title", "views"], operations=["list", "show", "create"])
    assert declaration.rules == {"title": "required|string|max:200", "views": "integer"}


def test_a_create_without_a_required_field_fails_validation():
    _, declaration = publish(enabled=True, fields=["title", "body"], operations=["list", "show", "create"])
    validator = compile_one(declaration).validator
    result = validator.validate({"body": "text"}, partial=False)
    assert list(result.errors) == ["title"]
    assert validator.validate({"title": "x" * 201}, partial=False).errors["title"]
    assert validator.validate({"title": "Hello"}, partial=False).is_valid


@pytest.mark.parametrize(
    ("field", "rules"),
    [
        (ConstructorField("f", "string"), "string|max:255"),
        (ConstructorField("f", "string", length=80), "string|max:80"),
        (ConstructorField("f", "text"), "string"),
        (ConstructorField("f", "text", length=5000), "string|max:5000"),
        (ConstructorField("f", "integer"), "integer"),
        (ConstructorField("f", "number"), "numeric"),
        (ConstructorField("f", "decimal"), "numeric"),
        (ConstructorField("f", "boolean"), "boolean"),
        (ConstructorField("f", "date"), "date"),
        (ConstructorField("f", "datetime"), "date"),
        (ConstructorField("f", "email", required=True), "required|string|email|max:255"),
        (ConstructorField("f", "url", length=500), "string|url|max:500"),
    ],
)
def test_rules_are_derived_from_the_field_definition(field, rules):
    assert rules_for(field) == rules


@pytest.mark.parametrize(
    "type_", ["string", "text", "integer", "number", "decimal", "boolean", "date", "datetime", "email", "url"]
)
@pytest.mark.parametrize("required", [True, False])
def test_the_derived_rules_of_every_type_compile_against_its_column(type_, required):
    table = ConstructorTable("t", "T", (ConstructorField("f", type_, required=required),))
    _, declaration = declaration_for(table, ApiTab(enabled=True, fields=["f"], operations=["list", "create"]))
    spec = compile_one(declaration)
    assert spec.writable == ("f",)
    assert spec.validator is not None


# -- URL name ----------------------------------------------------------------------------------
def test_the_url_name_is_a_transliteration_of_the_table_title():
    assert url_name_for(NEWS) == "novosti_kompanii"


def test_the_url_name_can_be_overridden():
    name, declaration = publish(enabled=True, fields=["title"], url_name="news")
    assert name == declaration.name == "news"


def test_the_scopes_follow_the_url_name():
    _, declaration = publish(enabled=True, fields=["title"], url_name="news")
    assert (declaration.read_scope, declaration.write_scope) == ("news.read", "news.write")


def test_a_title_with_nothing_to_transliterate_falls_back_to_the_sql_name():
    assert url_name_for(ConstructorTable("Site_News", "!!!")) == "site_news"
    assert url_name_for(ConstructorTable("Site_News")) == "site_news"


# -- Source ------------------------------------------------------------------------------------
def test_the_declaration_names_its_constructor_table_as_its_source():
    _, declaration = publish(enabled=True, fields=["title"])
    assert declaration.source == Source.constructor("site_news")
    assert declaration.source.is_constructor and str(declaration.source) == "constructor:site_news"
    assert declaration.table is not None and declaration.table.name == "site_news"
    assert [column.name for column in declaration.table.columns] == [
        "id",
        "title",
        "body",
        "views",
        "author_email",
        "secret",
        "published",
    ]
