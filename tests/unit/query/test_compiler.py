"""Compiled statements, run on an in-memory SQLite database and read as SQL for the other dialects."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.dialects import mysql, postgresql, sqlite

from pb_headless.fields import kinds
from pb_headless.query.compiler import compile_list, compile_show, relation_select
from pb_headless.query.grammar import parse_query
from pb_headless.query.parameters import Binder
from pb_headless.query.planner import plan_list, plan_show
from pb_headless.registry.spec import ObjectSpec

Fetch = Callable[[sa.Select[Any]], list[dict[str, Any]]]
DIALECTS = {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect(), "mysql": mysql.dialect()}


def listed(spec: ObjectSpec, fetch: Fetch, *pairs: tuple[str, str]) -> tuple[list[int], int]:
    """The ids of the page and the total, with a page big enough for every row unless asked."""
    if not any(key == "limit" for key, _ in pairs):
        pairs = (*pairs, ("limit", "3"))
    plan = plan_list(spec, parse_query(pairs))
    assert plan.details == {}
    page, count = compile_list(spec, plan, "sqlite")
    return [row["id"] for row in fetch(page)], fetch(count)[0]["count_1"]


def sql(statement: sa.Select[Any], dialect: str) -> str:
    return str(statement.compile(dialect=DIALECTS[dialect]))


def test_only_published_rows_are_listed_and_counted(article_spec: ObjectSpec, fetch: Fetch) -> None:
    assert listed(article_spec, fetch) == ([1, 2, 3], 4)
    assert listed(article_spec, fetch, ("limit", "2"), ("page", "2")) == ([3, 5], 4)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("filter[title][like]", "%", [2]),
        ("filter[title][like]", "100%", [2]),
        ("filter[title][like]", "pure_", [2]),
        ("filter[body][like]", "\\", [2]),
        ("filter[body][like]", "C:\\t", [2]),
        ("filter[title][like]", "!", []),
        ("filter[title][like]", "новости", [1]),
        ("filter[title][like]", "НЕДЕЛИ", [1]),
        ("filter[title][like]", "", [1, 2, 3]),
    ],
)
def test_like_is_a_case_insensitive_literal_contains(
    article_spec: ObjectSpec, fetch: Fetch, key: str, value: str, expected: list[int]
) -> None:
    assert listed(article_spec, fetch, (key, value))[0] == expected


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ("pure fun", [2, 5]),
        ("pure_ fun", [2]),
        ("0%", [2]),
        ("выпуск НОВОСТИ", [1]),
        ("temp\\", []),
        ("\\temp", [2]),
        ("pure nothing", []),
    ],
)
def test_every_search_term_must_appear_in_some_searchable_field(
    article_spec: ObjectSpec, fetch: Fetch, terms: str, expected: list[int]
) -> None:
    assert listed(article_spec, fetch, ("search", terms))[0] == expected


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ((("filter[views]", "10"),), [1]),
        ((("filter[views][ne]", "10"),), [2, 5]),
        ((("filter[views][nin]", "10,20"),), [5]),
        ((("filter[views][in]", "10,30,99"),), [1, 5]),
        ((("filter[views][between]", "10,20"),), [1, 2]),
        ((("filter[views][gt]", "10"), ("filter[views][lte]", "30")), [2, 5]),
        ((("filter[views][null]", "true"),), [3]),
        ((("filter[views][null]", "0"),), [1, 2, 5]),
        ((("filter[views][ne]", "10"), ("filter[views][null]", "1")), []),
        ((("filter[rating][gte]", "3"),), [1, 3]),
        ((("filter[price][lt]", "7.5"),), [2]),
        ((("filter[featured]", "true"),), [1]),
        ((("filter[published_on]", "2024-05-02"),), [2]),
        ((("filter[created_at][gte]", "2024-05-02"),), [2, 5]),
        ((("filter[created_at][lt]", "2024-05-01T14:00:00+02:00"),), []),
        ((("filter[created_at][lte]", "2024-05-01T14:00:00+02:00"),), [1]),
        ((("filter[title]", "Plain title"),), [3]),
        ((("filter[title][in][]", "Plain title"), ("filter[title][in][]", "Draft")), [3]),
    ],
)
def test_filters_and_together_with_sql_null_semantics(
    article_spec: ObjectSpec, fetch: Fetch, pairs: tuple[tuple[str, str], ...], expected: list[int]
) -> None:
    assert listed(article_spec, fetch, *pairs)[0] == expected


def test_sort_applies_in_order_and_the_primary_key_breaks_ties(
    article_spec: ObjectSpec, fetch: Fetch
) -> None:
    assert listed(article_spec, fetch, ("sort", "-price"))[0] == [1, 5, 2]
    plan = plan_list(article_spec, parse_query([("sort", "-price")]))
    assert (
        sql(compile_list(article_spec, plan, "sqlite")[0], "sqlite")
        .splitlines()[-2]
        .endswith("ORDER BY articles.price DESC, articles.id ASC")
    )


def test_the_page_selects_only_the_requested_fields_and_relation_keys(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("fields", "title"), ("with", "author,comments")]))
    page, _ = compile_list(article_spec, plan, "sqlite")
    assert [column.name for column in page.selected_columns] == ["id", "title", "author_id"]


def test_query_narrows_the_page_and_the_count(
    make_spec: Callable[..., ObjectSpec], fetch: Fetch, article_spec: ObjectSpec
) -> None:
    articles = article_spec.table
    spec = make_spec(query=lambda select: select.where(articles.c.views > 10))
    assert listed(spec, fetch) == ([2, 5], 2)


def test_a_query_that_joins_counts_the_rows_the_pages_show(
    make_spec: Callable[..., ObjectSpec], fetch: Fetch, article_spec: ObjectSpec
) -> None:
    articles, comments = article_spec.table, article_spec.relations["comments"].table
    spec = make_spec(query=lambda select: select.join(comments, comments.c.article_id == articles.c.id))
    assert listed(spec, fetch, ("limit", "3"), ("offset", "0")) == ([1, 1, 2], 4)
    assert listed(spec, fetch, ("limit", "3"), ("offset", "3")) == ([5], 4)


def test_query_is_called_on_every_compile_so_it_may_read_the_clock(
    make_spec: Callable[..., ObjectSpec],
) -> None:
    calls = []
    spec = make_spec(query=lambda select: calls.append(1) or select)
    plan = plan_list(spec, parse_query([]))
    compile_list(spec, plan, "sqlite")
    compile_list(spec, plan, "sqlite")
    compile_show(spec, plan_show(spec, parse_query([])), 1, "sqlite")
    assert len(calls) == 3


def test_planning_compiling_and_rendering_describe_no_column_again(
    article_spec: ObjectSpec, fetch: Fetch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A column's description is made with its field, once per registry version: a request's plan,
    statements and records read `FieldSpec.description` and never describe a column themselves."""

    def refused(_: Any) -> Any:
        raise AssertionError("a column was described during a request")

    monkeypatch.setattr(kinds, "_type_facts", refused)
    pairs = [("filter[views][gt]", "1"), ("search", "news"), ("sort", "-price"), ("fields", "id,title,price")]
    plan = plan_list(article_spec, parse_query(pairs))
    assert plan.details == {}
    page, _ = compile_list(article_spec, plan, "sqlite")
    assert isinstance(plan.render(fetch(page)), list)


def test_the_compiler_hands_back_the_parameters_it_bound_in_order(article_spec: ObjectSpec) -> None:
    """No ambient state: a recording binder passed to the compiler holds what it bound, and only
    that compile's parameters; a compile without one records nothing."""
    pairs = [("filter[views][gt]", "3"), ("filter[id][in]", "1,2"), ("search", "x")]
    plan = plan_list(article_spec, parse_query(pairs))
    binder = Binder("postgresql", recording=True)
    compile_list(article_spec, plan, binder)
    assert [note.value for note in binder.parameters] == [3, 1, 2, "x"]
    other = Binder("postgresql", recording=True)
    compile_list(article_spec, plan_list(article_spec, parse_query([("search", "y")])), "postgresql")
    assert other.parameters == ()
    assert Binder("sqlite").parameters == ()


def test_the_count_wraps_the_filtered_select_without_its_order(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("sort", "-price"), ("filter[views][gt]", "1")]))
    _, count = compile_list(article_spec, plan, "postgresql")
    text = sql(count, "postgresql")
    assert text.startswith("SELECT count(*) AS count_1 \nFROM (SELECT")
    assert "ORDER BY" not in text and "LIMIT" not in text


def test_show_finds_only_a_published_row(article_spec: ObjectSpec, fetch: Fetch) -> None:
    plan = plan_show(article_spec, parse_query([("fields", "title")]))
    assert fetch(compile_show(article_spec, plan, 1, "sqlite")) == [{"id": 1, "title": "Новости недели"}]
    assert fetch(compile_show(article_spec, plan, 4, "sqlite")) == []


def test_a_relation_loads_the_published_related_rows_of_many_keys_in_one_statement(
    article_spec: ObjectSpec, fetch: Fetch
) -> None:
    author = article_spec.relations["author"]
    assert fetch(relation_select(author, [1, 2])) == [{"id": 1, "name": "Анна", "pb_relation_key": 1}]
    rows = fetch(relation_select(article_spec.relations["comments"], [5, 1, 2]))
    assert [(row["pb_relation_key"], row["id"]) for row in rows] == [(1, 1), (1, 2), (5, 4)]


def test_a_to_many_relation_keeps_its_first_rows_per_key_by_one_window_on_every_dialect(
    article_spec: ObjectSpec, fetch: Fetch
) -> None:
    comments = dataclasses.replace(article_spec.relations["comments"], limit=1)
    rows = fetch(relation_select(comments, [5, 1, 2]))
    # Two rows for key 1: the limit, and one more that tells the relation was cut.
    assert [(row["pb_relation_key"], row["id"], row["pb_relation_position"]) for row in rows] == [
        (1, 1, 1),
        (1, 2, 2),
        (5, 4, 1),
    ]
    for dialect in DIALECTS:
        assert "row_number() OVER (PARTITION BY comments.article_id ORDER BY comments.id ASC)" in sql(
            relation_select(comments, [1]), dialect
        )


def test_like_and_search_escape_with_an_explicit_character_on_every_dialect(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("filter[title][like]", "a"), ("search", "b")]))
    for dialect in DIALECTS:
        text = sql(compile_list(article_spec, plan, dialect)[0], dialect)
        assert text.count(" LIKE ") == text.count("ESCAPE '!'") >= 3  # every LIKE, SQLite's two per field too


def test_case_folding_uses_the_database_function_of_each_dialect(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("filter[title][like]", "a")]))
    on_sqlite = sql(compile_list(article_spec, plan, "sqlite")[0], "sqlite")
    assert "pb_casefold(articles.title) LIKE pb_casefold(" in on_sqlite
    assert "lower(articles.title) LIKE lower(" in sql(compile_list(article_spec, plan, "mysql")[0], "mysql")


def test_one_search_term_is_one_parameter_whatever_the_number_of_fields(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("search", "red shoes")]))
    compiled = compile_list(article_spec, plan, "mysql")[0].compile(dialect=DIALECTS["mysql"])
    patterns = [value for value in compiled.params.values() if isinstance(value, str)]
    assert patterns == ["%red%", "%shoes%"]


def test_a_like_pattern_escapes_percent_underscore_and_the_escape_character(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("filter[title][like]", "5%_!\\")]))
    compiled = compile_list(article_spec, plan, "postgresql")[0].compile(dialect=DIALECTS["postgresql"])
    assert "%5!%!_!!\\%" in compiled.params.values()


def test_postgresql_compares_integers_and_floats_through_widened_parameters(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("filter[views][in]", "1,2"), ("filter[rating][gt]", "1")]))
    text = sql(compile_list(article_spec, plan, "postgresql")[0], "postgresql")
    assert "articles.views IN (CAST(" in text and "AS BIGINT)" in text
    assert "articles.rating > CAST(" in text and "AS DOUBLE PRECISION)" in text
    assert "CAST(" not in sql(compile_list(article_spec, plan, "mysql")[0], "mysql")


def test_a_naive_datetime_column_receives_naive_utc(article_spec: ObjectSpec) -> None:
    plan = plan_list(article_spec, parse_query([("filter[created_at]", "2024-05-01T14:00:00+02:00")]))
    compiled = compile_list(article_spec, plan, "sqlite")[0].compile(dialect=DIALECTS["sqlite"])
    assert datetime(2024, 5, 1, 12, 0) in compiled.params.values()


def test_a_column_that_is_neither_text_uuid_nor_enum_is_compared_as_text(
    compile_specs: Callable[..., dict[str, ObjectSpec]],
) -> None:
    table = sa.Table(
        "slots",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("starts", sa.Time),
        sa.Column("code", sa.Uuid),
    )
    declaration = {
        "model": table,
        "fields": ["starts", "code"],
        "filterable": ["starts", "code"],
        "searchable": ["starts", "code"],
    }
    spec = compile_specs({"slots": declaration})["slots"]
    plan = plan_list(spec, parse_query([("filter[starts]", "10:00"), ("search", "10")]))
    text = sql(compile_list(spec, plan, "postgresql")[0], "postgresql")
    assert "CAST(slots.starts AS VARCHAR) = " in text
    assert "lower(CAST(slots.code AS VARCHAR)) LIKE" in text


KEYS = st.one_of(
    st.sampled_from(["search", "sort", "fields", "with", "limit", "offset", "page", "filter"]),
    st.builds(
        lambda field, operator, brackets: f"filter[{field}]{operator}{brackets}",
        st.sampled_from(
            [
                "id",
                "title",
                "views",
                "price",
                "rating",
                "featured",
                "published_on",
                "created_at",
                "meta",
                "secret",
                "nope",
                "",
            ]
        ),
        st.sampled_from(
            [
                "",
                "[eq]",
                "[ne]",
                "[gt]",
                "[lte]",
                "[like]",
                "[in]",
                "[nin]",
                "[between]",
                "[null]",
                "[regex]",
                "[",
                "[a][b]",
            ]
        ),
        st.sampled_from(["", "[]"]),
    ),
    st.text(max_size=12),
)
VALUES = st.one_of(
    st.text(max_size=20), st.sampled_from(["1", "0", "true", "2024-05-01", "1.5", "-id", "a,b"])
)


@settings(max_examples=300, deadline=None, database=None)
@given(pairs=st.lists(st.tuples(KEYS, VALUES), max_size=8))
def test_no_query_string_makes_planning_compiling_or_running_fail(
    article_spec: ObjectSpec, engine: sa.Engine, pairs: list[tuple[str, str]]
) -> None:
    plan = plan_list(article_spec, parse_query(pairs))
    if plan.details:
        return  # a 422, which is an answer
    page, count = compile_list(article_spec, plan, "sqlite")
    with engine.connect() as connection:
        connection.execute(page).all()
        connection.execute(count).scalar_one()
    for dialect in ("postgresql", "mysql"):
        compile_list(article_spec, plan, dialect)[0].compile(dialect=DIALECTS[dialect])
