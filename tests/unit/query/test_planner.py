"""The planner: whitelists, conversions, defaults and what it reports as ignored or invalid."""

from __future__ import annotations

import ast
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa

import pb_headless.query as query_package
from pb_headless.query.grammar import parse_query
from pb_headless.query.operators import Operator
from pb_headless.query.planner import ListPlan, filter_operators, plan_list, plan_show, sortable_fields
from pb_headless.registry.spec import ObjectSpec


def plan(spec: ObjectSpec, *pairs: tuple[str, str]) -> ListPlan:
    return plan_list(spec, parse_query(pairs))


def only_value(spec: ObjectSpec, key: str, value: str) -> Any:
    result = plan(spec, (key, value))
    assert result.details == {}
    (condition,) = result.conditions
    return condition.value


# -- filters -----------------------------------------------------------------------------------------


def test_a_filter_on_a_filterable_field_becomes_a_condition(article_spec: ObjectSpec) -> None:
    (condition,) = plan(article_spec, ("filter[title][ne]", "x")).conditions
    assert (condition.field.name, condition.operator, condition.value, condition.written) == (
        "title",
        "ne",
        "x",
        "filter[title][ne]",
    )


@pytest.mark.parametrize("key", ["filter[secret]", "filter[author_id]", "filter[nope]", "filter[published]"])
def test_a_filter_on_an_unpublished_or_unknown_field_is_ignored_as_written(
    article_spec: ObjectSpec, key: str
) -> None:
    result = plan(article_spec, (key, "1"))
    assert result.conditions == ()
    assert result.ignored == (key,)


def test_a_filter_on_a_published_field_outside_filterable_is_ignored(
    make_spec: Callable[..., ObjectSpec],
) -> None:
    spec = make_spec(filterable=["title"])
    assert plan(spec, ("filter[views]", "1")).ignored == ("filter[views]",)


def test_an_unknown_operator_is_ignored_as_written(article_spec: ObjectSpec) -> None:
    assert plan(article_spec, ("filter[title][regex]", "^a")).ignored == ("filter[title][regex]",)


@pytest.mark.parametrize(
    "key", ["filter[views][like]", "filter[published_on][like]", "filter[meta]", "filter[meta][null]"]
)
def test_like_on_a_non_text_field_and_any_filter_on_json_are_ignored(
    article_spec: ObjectSpec, key: str
) -> None:
    result = plan(article_spec, (key, "1"))
    assert (result.conditions, result.ignored, result.details) == ((), (key,), {})


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("filter[views]", "42", 42),
        ("filter[views]", " -7 ", -7),
        ("filter[rating][gt]", "4.5", 4.5),
        ("filter[rating][gt]", "1e3", 1000.0),
        ("filter[price][gte]", "19.99", Decimal("19.99")),
        ("filter[price][gte]", "-.5", Decimal("-0.5")),
        ("filter[featured]", "true", True),
        ("filter[featured]", "0", False),
        ("filter[featured]", "FALSE", False),
        ("filter[published_on]", "2024-05-01", date(2024, 5, 1)),
        ("filter[created_at][gte]", "2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        ("filter[created_at][gte]", "2024-05-01T10:30:00", datetime(2024, 5, 1, 10, 30, tzinfo=UTC)),
        ("filter[created_at][gte]", "2024-05-01T10:30:00+02:00", datetime(2024, 5, 1, 8, 30, tzinfo=UTC)),
        ("filter[created_at][gte]", "2024-05-01T10:30:00Z", datetime(2024, 5, 1, 10, 30, tzinfo=UTC)),
        ("filter[created_at][gte]", "2024-05-01T10:30:00 02:00", datetime(2024, 5, 1, 8, 30, tzinfo=UTC)),
        ("filter[title]", " as written ", " as written "),
        ("filter[title][like]", "50%_off", "50%_off"),
    ],
)
def test_filter_values_are_converted_by_the_field_kind(
    article_spec: ObjectSpec, key: str, value: str, expected: Any
) -> None:
    converted = only_value(article_spec, key, value)
    assert converted == expected
    assert type(converted) is type(expected)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("filter[views]", "abc", "must be an integer"),
        ("filter[views]", "1.5", "must be an integer"),
        ("filter[views]", "9223372036854775808", "must be an integer"),
        ("filter[views]", "١٢", "must be an integer"),
        ("filter[price][gte]", "abc", "must be a number"),
        ("filter[price][gte]", "1e5", "must be a number"),
        ("filter[price][gte]", "NaN", "must be a number"),
        ("filter[rating]", "inf", "must be a number"),
        ("filter[rating]", "1e999", "must be a number"),
        ("filter[featured]", "yes", "must be true, false, 1 or 0"),
        ("filter[published_on]", "2024-13-01", "must be a date (YYYY-MM-DD)"),
        ("filter[published_on]", "20240501", "must be a date (YYYY-MM-DD)"),
        ("filter[created_at]", "yesterday", "must be a date-time (ISO 8601, e.g. 2024-05-01T12:00:00+00:00)"),
        ("filter[title]", "a\x00b", "must not contain NUL characters"),
    ],
)
def test_a_value_that_does_not_convert_is_reported_under_the_key_as_written(
    article_spec: ObjectSpec, key: str, value: str, message: str
) -> None:
    result = plan(article_spec, (key, value))
    assert result.details == {key: [message]}
    assert result.conditions == ()


def test_every_failing_filter_is_reported_with_each_message_once(article_spec: ObjectSpec) -> None:
    result = plan(
        article_spec, ("filter[views][in]", "a,b"), ("filter[views][in]", "c"), ("filter[price][gte]", "x")
    )
    assert result.details == {
        "filter[views][in]": ["must be an integer"],
        "filter[price][gte]": ["must be a number"],
    }


def test_in_and_nin_take_at_most_one_hundred_values(article_spec: ObjectSpec) -> None:
    hundred = ",".join(str(n) for n in range(100))
    assert only_value(article_spec, "filter[views][nin]", hundred) == tuple(range(100))
    result = plan(article_spec, ("filter[views][in]", f"{hundred},100"))
    assert result.details == {"filter[views][in]": ["must have at most 100 values"]}


def test_the_repeated_in_form_counts_toward_the_same_limit(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, *[("filter[title][in][]", str(n)) for n in range(101)])
    assert result.details == {"filter[title][in][]": ["must have at most 100 values"]}


@pytest.mark.parametrize("value", ["1", "1,2,3", ""])
def test_between_needs_exactly_two_values(article_spec: ObjectSpec, value: str) -> None:
    result = plan(article_spec, ("filter[views][between]", value))
    assert result.details == {"filter[views][between]": ["must have exactly two values"]}


def test_between_converts_both_ends(article_spec: ObjectSpec) -> None:
    value = only_value(article_spec, "filter[created_at][between]", "2024-05-01,2024-05-02T00:00:00+01:00")
    assert value == (datetime(2024, 5, 1, tzinfo=UTC), datetime(2024, 5, 1, 23, 0, tzinfo=UTC))


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("false", False), ("0", False)])
def test_null_takes_true_1_false_or_0(article_spec: ObjectSpec, value: str, expected: bool) -> None:
    assert only_value(article_spec, "filter[views][null]", value) is expected


@pytest.mark.parametrize("value", ["yes", "", "null", "2"])
def test_null_with_any_other_value_is_invalid(article_spec: ObjectSpec, value: str) -> None:
    result = plan(article_spec, ("filter[views][null]", value))
    assert result.details == {"filter[views][null]": ["must be true, 1, false or 0"]}


def test_a_uuid_field_takes_only_uuids_and_an_enum_field_only_its_labels(
    compile_specs: Callable[..., dict[str, ObjectSpec]],
) -> None:
    table = sa.Table(
        "things",
        sa.MetaData(),
        sa.Column("id", sa.Uuid, primary_key=True),
        sa.Column("state", sa.Enum("draft", "live", name="state")),
    )
    declaration = {"model": table, "fields": ["state"], "filterable": ["id", "state"]}
    spec = compile_specs({"things": declaration})["things"]
    uid = "12345678-1234-5678-1234-567812345678"
    assert only_value(spec, "filter[id]", uid) == UUID(uid)
    assert plan(spec, ("filter[id]", "abc")).details == {"filter[id]": ["must be a UUID"]}
    assert plan(spec, ("filter[state]", "gone")).details == {"filter[state]": ["must be one of: draft, live"]}
    assert only_value(spec, "filter[state][like]", "dra") == "dra"


# -- search --------------------------------------------------------------------------------------------


def test_search_terms_are_collected_once_each(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("search", "red shoes red"), ("search", "new"))
    assert result.search == ("red", "shoes", "new")


def test_an_empty_search_is_not_reported(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("search", "  "))
    assert (result.search, result.ignored) == ((), ())


def test_search_on_an_object_without_searchable_fields_is_ignored(
    make_spec: Callable[..., ObjectSpec],
) -> None:
    result = plan(make_spec(searchable=[]), ("search", "red"))
    assert (result.search, result.ignored) == ((), ("search=red",))


def test_a_search_term_with_a_nul_character_is_invalid(article_spec: ObjectSpec) -> None:
    assert plan(article_spec, ("search", "a\x00")).details == {"search": ["must not contain NUL characters"]}


# -- sort ------------------------------------------------------------------------------------------------


def order_of(result: ListPlan) -> list[tuple[str, bool]]:
    return [(order.field.name, order.descending) for order in result.order]


def test_sort_follows_the_request_and_ends_with_the_primary_key_ascending(article_spec: ObjectSpec) -> None:
    assert order_of(plan(article_spec, ("sort", "-price,title"))) == [
        ("price", True),
        ("title", False),
        ("id", False),
    ]


def test_sorting_by_the_primary_key_itself_adds_no_second_tie_breaker(article_spec: ObjectSpec) -> None:
    assert order_of(plan(article_spec, ("sort", "-id"))) == [("id", True)]


@pytest.mark.parametrize("item", ["-secret", "body", "nope", "-", "meta"])
def test_a_field_outside_sortable_is_ignored_as_written(
    make_spec: Callable[..., ObjectSpec], item: str
) -> None:
    result = plan(make_spec(sortable=["title", "meta"]), ("sort", f"{item},title"))
    assert order_of(result) == [("title", False), ("id", False)]
    assert result.ignored == (f"sort={item}",)


def test_a_field_sorted_twice_keeps_its_first_direction(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("sort", "title,-title"))
    assert order_of(result) == [("title", False), ("id", False)]
    assert result.ignored == ("sort=-title",)


def test_without_sort_the_default_sort_applies(make_spec: Callable[..., ObjectSpec]) -> None:
    spec = make_spec(default_sort="-created_at,secret")
    assert order_of(plan(spec)) == [("created_at", True), ("secret", False), ("id", False)]


def test_a_sort_that_is_entirely_ignored_falls_back_to_the_default(
    make_spec: Callable[..., ObjectSpec],
) -> None:
    result = plan(make_spec(default_sort="-views"), ("sort", "nope"))
    assert order_of(result) == [("views", True), ("id", False)]


def test_without_sort_or_default_sort_the_primary_key_orders_ascending(article_spec: ObjectSpec) -> None:
    assert order_of(plan(article_spec)) == [("id", False)]


# -- fields and with -----------------------------------------------------------------------------------


def names(fields: Any) -> list[str]:
    return [field.name for field in fields]


def test_fields_keep_published_order_and_always_include_the_primary_key(article_spec: ObjectSpec) -> None:
    assert names(plan(article_spec, ("fields", "price,title")).fields) == ["id", "title", "price"]


def test_fields_with_nothing_valid_give_every_published_field(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("fields", "secret,nope"))
    assert names(result.fields) == list(article_spec.fields)
    assert result.ignored == ("fields=secret", "fields=nope")


def test_with_loads_declared_relations_once_and_ignores_others(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("with", "author,author.posts,comments,author,tags"))
    assert names(result.relations) == ["author", "comments"]
    assert result.ignored == ("with=author.posts", "with=tags")


# -- paging ----------------------------------------------------------------------------------------------


def paging(spec: ObjectSpec, *pairs: tuple[str, str]) -> tuple[int, int]:
    result = plan(spec, *pairs)
    return result.limit, result.offset


def test_limit_defaults_to_per_page_and_is_clamped_to_max_per_page(article_spec: ObjectSpec) -> None:
    assert paging(article_spec) == (2, 0)
    assert paging(article_spec, ("limit", "50")) == (3, 0)
    assert plan(article_spec, ("limit", "50")).ignored == ()


def test_limit_zero_is_a_count_only_request(article_spec: ObjectSpec) -> None:
    assert paging(article_spec, ("limit", "0"), ("page", "3")) == (0, 0)


def test_page_is_one_based_and_offset_wins_over_it(article_spec: ObjectSpec) -> None:
    assert paging(article_spec, ("page", "3")) == (2, 4)
    assert paging(article_spec, ("page", "3"), ("limit", "3")) == (3, 6)
    assert paging(article_spec, ("page", "3"), ("offset", "1")) == (2, 1)


def test_invalid_paging_values_fall_back_to_the_defaults(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("limit", "abc"), ("offset", "-1"), ("page", "0"))
    assert (result.limit, result.offset) == (2, 0)
    assert result.ignored == ("limit=abc", "offset=-1", "page=0")


# -- the report --------------------------------------------------------------------------------------------


def test_ignored_items_are_listed_once_in_query_string_order(article_spec: ObjectSpec) -> None:
    result = plan(
        article_spec,
        ("sort", "-secret"),
        ("filter[", "1"),
        ("filter[secret]", "1"),
        ("limit", "abc"),
        ("filter[secret]", "2"),
        ("fields", "secret"),
        ("utm", "x"),
    )
    assert result.ignored == (
        "sort=-secret",
        "filter[",
        "filter[secret]",
        "limit=abc",
        "fields=secret",
        "utm=x",
    )


def test_show_plans_fields_and_relations_and_nothing_else(article_spec: ObjectSpec) -> None:
    shown = plan_show(
        article_spec,
        parse_query(
            [("fields", "title,secret"), ("with", "author,x.y"), ("filter[views]", "abc"), ("sort", "nope")]
        ),
    )
    assert names(shown.fields) == ["id", "title"]
    assert names(shown.relations) == ["author"]
    assert shown.ignored == ("fields=secret", "with=x.y")


def test_plans_are_frozen_values(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("filter[views]", "1"))
    assert result == plan(article_spec, ("filter[views]", "1"))
    with pytest.raises(AttributeError):
        result.limit = 5  # type: ignore[misc]


@pytest.mark.parametrize("module", ["grammar", "operators", "conversion", "planner", "limits"])
def test_the_parse_and_plan_stages_do_no_io_and_know_no_http(module: str) -> None:
    source = Path(query_package.__file__).with_name(f"{module}.py").read_text()
    nodes = list(ast.walk(ast.parse(source)))
    imported = {alias.name for node in nodes if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in nodes if isinstance(node, ast.ImportFrom)}
    forbidden = {
        "starlette",
        "databases",
        "pb_headless.errors",
        "pb_headless.database.dialect",
        "asyncio",
        "socket",
        "pb_headless.query.compiler",
        "pb_headless.query.executor",
    }
    assert not {name for name in imported if name.split(".")[0] in forbidden or name in forbidden}


def test_a_plain_offset_in_another_timezone_is_read_as_that_instant(article_spec: ObjectSpec) -> None:
    value = only_value(article_spec, "filter[created_at]", "2024-05-01T00:00:00-05:00")
    assert value == datetime(2024, 5, 1, tzinfo=timezone(timedelta(hours=-5)))


# -- what the planner lets a client filter and sort on (read by the OpenAPI document) ----------------


def test_filter_operators_name_each_filterable_field_in_published_order_with_its_operators(
    article_spec: ObjectSpec,
) -> None:
    operators = filter_operators(article_spec)
    assert list(operators) == [
        "id",
        "title",
        "body",
        "price",
        "rating",
        "views",
        "featured",
        "published_on",
        "created_at",
    ]  # `meta` is JSON: nothing applies
    assert operators["title"] == tuple(Operator)
    assert operators["price"] == tuple(operator for operator in Operator if operator is not Operator.LIKE)


def test_filter_operators_agree_with_what_the_planner_applies(article_spec: ObjectSpec) -> None:
    operators = filter_operators(article_spec)
    for name in article_spec.fields:
        for operator in Operator:
            value = "true" if operator is Operator.NULL else "1,2" if operator.takes_list else "1"
            result = plan(article_spec, (f"filter[{name}][{operator}]", value))
            applied = bool(result.conditions) or bool(result.details)
            assert applied == (operator in operators.get(name, ())), (name, operator)


def test_sortable_fields_are_the_sortable_published_fields_but_json(article_spec: ObjectSpec) -> None:
    assert sortable_fields(article_spec) == ("id", "title", "price", "views", "created_at")
