"""Paths through a relation in the planner and the compiler (docs/query.md, "Filters across relations")."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlalchemy as sa

from pb_headless.query.compiler import compile_list
from pb_headless.query.grammar import parse_query
from pb_headless.query.operators import Operator
from pb_headless.query.planner import filter_operators, plan_list
from pb_headless.registry.spec import ObjectSpec

PATHS = ["title", "author.name", "author.email", "comments.body"]


@pytest.fixture
def spec(make_spec: Callable[..., ObjectSpec]) -> ObjectSpec:
    # `author.email`: the authors object does not publish it; no object publishes comments: both
    # paths are declared but not usable.
    return make_spec(filterable=PATHS)


def test_a_usable_path_becomes_a_condition_on_the_related_field(spec: ObjectSpec) -> None:
    (condition,) = plan_list(spec, parse_query([("filter[author.name][like]", "ан")])).conditions
    assert (condition.name, condition.field.column.table.name, condition.operator) == (
        "author.name",
        "authors",
        Operator.LIKE,
    )
    assert condition.relation is spec.relations["author"]


@pytest.mark.parametrize(
    "key",
    [
        "filter[author.email]",
        "filter[comments.body]",
        "filter[author.id]",
        "filter[author.name.x]",
        "filter[writer.name]",
    ],
)
def test_a_path_that_is_not_usable_is_ignored_as_written_before_its_value_is_read(
    spec: ObjectSpec, key: str
) -> None:
    planned = plan_list(spec, parse_query([(key, "x"), ("filter[author.email][gte]", "not checked")]))
    assert planned.conditions == ()
    assert planned.details == {}
    assert planned.ignored == (key, "filter[author.email][gte]")


def test_the_operators_of_a_path_are_those_of_its_related_field(spec: ObjectSpec) -> None:
    operators = filter_operators(spec)
    assert list(operators) == ["title", "author.name"]
    assert operators["author.name"] == operators["title"]


def test_a_path_compiles_to_a_semi_join_never_a_join(spec: ObjectSpec) -> None:
    planned = plan_list(spec, parse_query([("filter[author.name]", "x")]))
    for statement in compile_list(spec, planned, "sqlite"):
        sql = str(statement.compile(dialect=sa.create_engine("sqlite://").dialect))
        assert "articles.author_id IN (SELECT authors.id" in sql
        assert " JOIN " not in sql


def test_a_path_to_a_field_the_relations_column_list_leaves_out_is_ignored(
    make_spec: Callable[..., ObjectSpec],
) -> None:
    # The authors object publishes `name`, but `with` shows only the author's id: nothing to test.
    spec = make_spec(**{"with": ["author:id"], "filterable": ["author.name"]})
    assert spec.paths == {}
    planned = plan_list(spec, parse_query([("filter[author.name]", "Анна")]))
    assert (planned.conditions, planned.ignored) == ((), ("filter[author.name]",))
