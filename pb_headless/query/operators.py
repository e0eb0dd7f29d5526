"""The filter operators of `filter[field][op]=value`, and what each takes and applies to.

The members are in documentation order (equality, comparisons, text, lists, nulls); the grammar,
the planner, the compiler and the OpenAPI document all read this one list.
"""

from __future__ import annotations

from enum import StrEnum

from pb_headless.fields import FieldKind


class Operator(StrEnum):
    """A filter operator. A `StrEnum`: `Operator.GTE == "gte"` holds."""

    EQ = "eq"
    NE = "ne"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    LIKE = "like"
    IN = "in"
    NIN = "nin"
    BETWEEN = "between"
    NULL = "null"

    @property
    def takes_list(self) -> bool:
        """Several values: comma-separated, or one per repeated `filter[f][op][]=` pair (the way to send
        values that contain commas)."""
        return self in (Operator.IN, Operator.NIN, Operator.BETWEEN)

    @property
    def takes_flag(self) -> bool:
        """`null` takes `true|1` (IS NULL) or `false|0` (IS NOT NULL), not a value of the field."""
        return self is Operator.NULL

    def applies_to(self, kind: FieldKind) -> bool:
        """Nothing applies to JSON (no two databases compare it alike); `like` only to text."""
        if not kind.is_comparable:
            return False
        return kind.is_textual if self is Operator.LIKE else True


DEFAULT_OPERATOR = Operator.EQ  # `filter[f]=v`
LIST_OPERATORS = frozenset(operator for operator in Operator if operator.takes_list)
