"""The filter operators: which take lists, which apply to which field kinds."""

from __future__ import annotations

import pytest

from pb_headless.fields import FieldKind
from pb_headless.query.operators import LIST_OPERATORS, Operator


def test_operators_are_in_documentation_order_and_compare_equal_to_their_names() -> None:
    assert list(Operator) == ["eq", "ne", "gt", "gte", "lt", "lte", "like", "in", "nin", "between", "null"]


def test_in_nin_and_between_take_lists_and_only_null_takes_a_flag() -> None:
    assert {Operator.IN, Operator.NIN, Operator.BETWEEN} == LIST_OPERATORS
    assert [operator for operator in Operator if operator.takes_flag] == [Operator.NULL]


@pytest.mark.parametrize("kind", [FieldKind.STRING, FieldKind.UUID, FieldKind.TIME, FieldKind.OTHER])
def test_like_applies_to_what_a_query_reads_as_text(kind: FieldKind) -> None:
    assert Operator.LIKE.applies_to(kind)


@pytest.mark.parametrize(
    "kind",
    [
        FieldKind.INTEGER,
        FieldKind.FLOAT,
        FieldKind.DECIMAL,
        FieldKind.BOOLEAN,
        FieldKind.DATE,
        FieldKind.DATETIME,
    ],
)
def test_like_does_not_apply_to_numbers_booleans_or_dates_but_every_other_operator_does(
    kind: FieldKind,
) -> None:
    assert [operator for operator in Operator if operator.applies_to(kind)] == [
        operator for operator in Operator if operator is not Operator.LIKE
    ]


def test_no_operator_applies_to_json() -> None:
    assert not any(operator.applies_to(FieldKind.JSON) for operator in Operator)
