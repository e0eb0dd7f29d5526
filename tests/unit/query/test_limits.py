"""The bounds on one list query: past each, the plan carries 422 details keyed as the client wrote it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pb_headless.query.grammar import parse_query
from pb_headless.query.limits import (
    MAX_BOUND_VALUES,
    MAX_FILTER_CONDITIONS,
    MAX_LIST_VALUES,
    MAX_SEARCH_PAIRS,
    MAX_SEARCH_TERMS,
    MAX_TEXT_LENGTH,
    most_search_terms,
)
from pb_headless.query.operators import Operator
from pb_headless.query.planner import ListPlan, filter_operators, most_conditions, plan_list
from pb_headless.registry.spec import ObjectSpec


def plan(spec: ObjectSpec, *pairs: tuple[str, str]) -> ListPlan:
    return plan_list(spec, parse_query(pairs))


def words(count: int) -> str:
    return " ".join(f"w{number}" for number in range(count))


def numbers(count: int) -> str:
    return ",".join(str(number) for number in range(count))


def test_the_bounds_are_those_the_documentation_states() -> None:
    assert (MAX_SEARCH_TERMS, MAX_FILTER_CONDITIONS, MAX_TEXT_LENGTH, MAX_LIST_VALUES, MAX_BOUND_VALUES) == (
        12,
        50,
        500,
        100,
        2000,
    )
    assert MAX_SEARCH_PAIRS == 12
    assert [most_search_terms(fields) for fields in (1, 2, 3, 4, 5, 12, 13, 40)] == [12, 6, 4, 3, 2, 1, 1, 1]


def test_a_search_of_six_words_in_two_fields_plans_and_one_more_is_refused(article_spec: ObjectSpec) -> None:
    assert len(article_spec.searchable) == 2
    assert len(plan(article_spec, ("search", words(6))).search) == 6
    refused = plan(article_spec, ("search", words(7)))
    assert (refused.search, refused.details) == ((), {"search": ["must have at most 6 different words"]})


def test_an_object_searched_in_one_field_takes_twelve_words(make_spec: Callable[..., ObjectSpec]) -> None:
    spec = make_spec(searchable=["title"])
    assert len(plan(spec, ("search", words(12))).search) == 12
    assert plan(spec, ("search", words(13))).details == {"search": ["must have at most 12 different words"]}


def test_search_words_are_counted_once_across_repeated_search_parameters(article_spec: ObjectSpec) -> None:
    result = plan(article_spec, ("search", words(6)), ("search", words(6)), ("search", "w0 w0"))
    assert (len(result.search), result.details) == (6, {})
    assert plan(article_spec, ("search", words(4)), ("search", "x1 x2 x3")).details == {
        "search": ["must have at most 6 different words"]
    }


def test_a_search_value_of_500_characters_plans_and_one_more_is_refused(article_spec: ObjectSpec) -> None:
    assert plan(article_spec, ("search", "a" * 500)).details == {}
    assert plan(article_spec, ("search", "a" * 501)).details == {"search": ["must be at most 500 characters"]}


def test_a_like_value_of_500_characters_plans_and_one_more_is_refused(article_spec: ObjectSpec) -> None:
    assert plan(article_spec, ("filter[title][like]", "é" * 500)).details == {}
    assert plan(article_spec, ("filter[title][like]", "é" * 501)).details == {
        "filter[title][like]": ["must be at most 500 characters"]
    }


def test_fifty_filter_conditions_plan_and_one_more_is_refused_keyed_filter(
    make_spec: Callable[..., ObjectSpec],
) -> None:
    spec = make_spec(filterable=["id", "title", "views"])
    pairs = [("filter[views][gte]", str(number)) for number in range(50)]
    assert len(plan(spec, *pairs).conditions) == 50
    refused = plan(spec, *pairs, ("filter[title]", "x"))
    assert (refused.conditions, refused.details) == ((), {"filter": ["must have at most 50 conditions"]})


def test_an_object_offering_more_filter_parameters_takes_one_condition_per_parameter(
    article_spec: ObjectSpec,
) -> None:
    # Seven fields of ten operators and two text fields of eleven, each also as bare `filter[f]`.
    assert most_conditions(article_spec) == 7 * 11 + 2 * 12
    every_parameter = [
        (f"filter[{name}][{operator}]" if operator else f"filter[{name}]", _value(operator))
        for name, operators in filter_operators(article_spec).items()
        for operator in (None, *operators)
    ]
    assert len(every_parameter) == 101
    assert "filter" not in plan(article_spec, *every_parameter).details  # other values may not convert
    assert plan(article_spec, *every_parameter, ("filter[id]", "1")).details == {
        "filter": ["must have at most 101 conditions"]
    }


def _value(operator: Operator | None) -> str:
    if operator is Operator.NULL:
        return "false"
    return "1,2" if operator is not None and operator.takes_list else "1"


def test_ignored_filters_do_not_count_towards_the_conditions(make_spec: Callable[..., ObjectSpec]) -> None:
    spec = make_spec(filterable=["id", "title", "views"])
    pairs = [("filter[views][gte]", "1")] * 50 + [("filter[secret]", "x")] * 30
    result = plan(spec, *pairs)
    assert (len(result.conditions), result.details) == (50, {})
    assert result.ignored == ("filter[secret]",)


def test_an_in_list_of_100_values_plans_and_one_more_is_refused(article_spec: ObjectSpec) -> None:
    assert plan(article_spec, ("filter[id][in]", numbers(100))).details == {}
    assert plan(article_spec, ("filter[id][nin]", numbers(101))).details == {
        "filter[id][nin]": ["must have at most 100 values"]
    }


def test_2000_bound_values_plan_and_one_more_is_refused(article_spec: ObjectSpec) -> None:
    lists = [("filter[id][in]", numbers(100))] * 20
    assert plan(article_spec, *lists).details == {}
    assert plan(article_spec, *lists, ("search", "one")).details == {
        "filter": ["must have at most 2000 values in all"]
    }
    assert plan(article_spec, *lists, ("filter[views]", "1")).details == {
        "filter": ["must have at most 2000 values in all"]
    }


@pytest.mark.parametrize(("key", "value"), [("filter[views][null]", "true"), ("filter[id][between]", "1,2")])
def test_null_binds_no_value_and_between_two(article_spec: ObjectSpec, key: str, value: str) -> None:
    lists = [("filter[id][in]", numbers(100))] * 19 + [("filter[id][in]", numbers(98))]
    assert plan(article_spec, *lists, (key, value)).details == {}
    assert bool(plan(article_spec, *lists, ("filter[title]", "x"), (key, value)).details) == (
        key == "filter[id][between]"
    )
