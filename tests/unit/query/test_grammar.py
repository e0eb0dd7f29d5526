"""The query-string grammar, on its own: pairs in, typed terms out."""

from __future__ import annotations

import pytest

from pb_headless.query.grammar import (
    SHOW_QUERY,
    FilterTerm,
    ListItem,
    NumberTerm,
    ParsedQuery,
    SearchText,
    parse_query,
)


def ignored(query: ParsedQuery) -> list[str]:
    return [item.written for item in query.ignored]


def test_a_filter_without_an_operator_means_eq() -> None:
    query = parse_query([("filter[title]", "News")])
    assert query.filters == (FilterTerm("title", "eq", ("News",), "filter[title]", 0),)


def test_a_filter_with_an_operator_keeps_its_key_as_written() -> None:
    (term,) = parse_query([("filter[price][gte]", "10")]).filters
    assert (term.field, term.operator, term.values) == ("price", "gte", ("10",))
    assert term.written == "filter[price][gte]"


@pytest.mark.parametrize("operator", ["in", "nin", "between"])
def test_list_operators_split_their_value_on_commas(operator: str) -> None:
    (term,) = parse_query([(f"filter[id][{operator}]", "1,2,3")]).filters
    assert term.values == ("1", "2", "3")


@pytest.mark.parametrize("operator", ["eq", "ne", "like", "gt"])
def test_single_value_operators_keep_commas_in_their_value(operator: str) -> None:
    (term,) = parse_query([(f"filter[title][{operator}]", "a,b")]).filters
    assert term.values == ("a,b",)


def test_the_repeated_bracket_form_collects_values_that_contain_commas() -> None:
    query = parse_query([("filter[tag][in][]", "a,b"), ("limit", "5"), ("filter[tag][in][]", "c")])
    assert query.filters == (FilterTerm("tag", "in", ("a,b", "c"), "filter[tag][in][]", 0),)


def test_the_repeated_bracket_form_and_the_comma_form_are_two_terms() -> None:
    query = parse_query([("filter[id][in]", "1,2"), ("filter[id][in][]", "3")])
    assert [term.values for term in query.filters] == [("1", "2"), ("3",)]


def test_the_same_filter_key_repeated_gives_two_terms_that_and_together() -> None:
    query = parse_query([("filter[views][gt]", "1"), ("filter[views][gt]", "5")])
    assert [term.values for term in query.filters] == [("1",), ("5",)]


@pytest.mark.parametrize(
    "key",
    [
        "filter",
        "filter[",
        "filter[]",
        "filter[a][b][c]",
        "filter[a]x",
        "filter[a][]",
        "filter[a][eq][]",
        "filter[a][like][]",
        "filter[[a]]",
        "filter[a][]]",
    ],
)
def test_a_malformed_filter_key_is_ignored_as_written(key: str) -> None:
    query = parse_query([(key, "1")])
    assert query.filters == ()
    assert ignored(query) == [key]


@pytest.mark.parametrize("key", ["filter[title][regex]", "filter[title][EQ]", "filter[title][]eq"])
def test_an_unknown_operator_is_ignored_as_written(key: str) -> None:
    query = parse_query([(key, "x")])
    assert query.filters == ()
    assert ignored(query) == [key]


def test_the_string_null_is_just_a_value_for_other_operators() -> None:
    (term,) = parse_query([("filter[title]", "null")]).filters
    assert (term.operator, term.values) == ("eq", ("null",))


def test_search_is_split_on_any_whitespace() -> None:
    query = parse_query([("search", "  red\tshoes  новые ")])
    assert query.search == (SearchText(("red", "shoes", "новые"), "search=  red\tshoes  новые ", 0),)


@pytest.mark.parametrize("value", ["", "   ", "\t"])
def test_an_empty_search_is_neither_a_search_nor_ignored(value: str) -> None:
    query = parse_query([("search", value)])
    assert query.search == ()
    assert query.ignored == ()


def test_repeated_search_parameters_all_apply() -> None:
    query = parse_query([("search", "red"), ("search", "shoes")])
    assert [text.terms for text in query.search] == [("red",), ("shoes",)]


def test_sort_reads_a_comma_list_with_a_minus_for_descending() -> None:
    query = parse_query([("sort", "-price, title,,")])
    assert query.sort == (
        ListItem("price", "sort=-price", 0, True),
        ListItem("title", "sort=title", 0, False),
    )


def test_repeated_list_parameters_read_as_one_comma_list() -> None:
    query = parse_query([("fields", "title"), ("fields", "price"), ("with", "author"), ("with", "tags")])
    assert [item.name for item in query.fields] == ["title", "price"]
    assert [item.name for item in query.relations] == ["author", "tags"]


def test_list_items_carry_their_parameter_as_written() -> None:
    query = parse_query([("fields", "secret"), ("with", "author.posts"), ("sort", "-secret")])
    assert [query.fields[0].written, query.relations[0].written, query.sort[0].written] == [
        "fields=secret",
        "with=author.posts",
        "sort=-secret",
    ]


@pytest.mark.parametrize("key", ["limit", "offset", "page"])
def test_paging_numbers_are_read_from_ascii_digits(key: str) -> None:
    query = parse_query([(key, "0042")])
    assert getattr(query, key) == NumberTerm(42, f"{key}=0042", 0)


NOT_DIGITS = ["abc", "-1", "+5", "1.5", "", " 5", "1e3", "１２"]
PAST_THE_RANGE = ["2147483648", "9" * 5000]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        *((key, value) for key in ("limit", "offset", "page") for value in NOT_DIGITS),
        *((key, value) for key in ("offset", "page") for value in PAST_THE_RANGE),
    ],
)
def test_a_paging_value_that_is_not_plain_digits_in_range_is_ignored_as_written(key: str, value: str) -> None:
    query = parse_query([(key, value)])
    assert getattr(query, key) is None
    assert ignored(query) == [f"{key}={value}"]


@pytest.mark.parametrize("value", ["2147483648", "99999999999999999999", "9" * 5000])
def test_a_limit_of_digits_past_the_range_is_ignored_as_written(value: str) -> None:
    query = parse_query([("limit", value)])
    assert query.limit is None
    assert ignored(query) == [f"limit={value}"]


def test_the_largest_paging_number_is_two_to_the_31_minus_one() -> None:
    assert parse_query([("offset", "2147483647")]).offset == NumberTerm(2**31 - 1, "offset=2147483647", 0)


def test_limit_and_offset_zero_are_allowed_but_page_zero_is_ignored() -> None:
    query = parse_query([("limit", "0"), ("offset", "0"), ("page", "0")])
    assert (query.limit and query.limit.value, query.offset and query.offset.value) == (0, 0)
    assert query.page is None
    assert ignored(query) == ["page=0"]


def test_a_repeated_paging_number_keeps_the_last_and_names_the_overridden_one() -> None:
    query = parse_query([("limit", "5"), ("limit", "abc"), ("limit", "7")])
    assert query.limit == NumberTerm(7, "limit=7", 2)
    assert sorted(ignored(query)) == ["limit=5", "limit=abc"]


def test_parameters_outside_the_grammar_are_ignored_and_named_as_written() -> None:
    query = parse_query([("utm_source", "x"), ("_", "123"), ("filters[a]", "1"), ("Limit", "5")])
    assert ignored(query) == ["utm_source=x", "_=123", "filters[a]=1", "Limit=5"]
    assert query == ParsedQuery(ignored=query.ignored)


def test_a_read_names_the_parameters_it_does_not_take_and_leaves_its_own_alone() -> None:
    pairs = [("fields", "title"), ("limit", "5"), ("filter[a]", "1"), ("since", "abc"), ("limt", "1")]
    query = parse_query(pairs, SHOW_QUERY, frozenset({"since"}))
    assert [item.name for item in query.fields] == ["title"]
    assert (query.limit, query.filters) == (None, ())
    assert ignored(query) == ["limit=5", "filter[a]=1", "limt=1"]


def test_every_term_remembers_its_position_in_the_query_string() -> None:
    query = parse_query([("sort", "title"), ("filter[a]", "1"), ("filter[", "x"), ("fields", "a")])
    assert (
        query.sort[0].position,
        query.filters[0].position,
        query.ignored[0].position,
        query.fields[0].position,
    ) == (0, 1, 2, 3)
