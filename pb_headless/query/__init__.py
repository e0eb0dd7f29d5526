"""The read path of the generic endpoints: parse → plan → compile to SQL → run and render."""

from pb_headless.query.compiler import compile_list, compile_show, relation_select
from pb_headless.query.executor import fetch_one
from pb_headless.query.grammar import OPERATORS, ParsedQuery, parse_query
from pb_headless.query.operators import Operator
from pb_headless.query.planner import (
    Condition,
    ListPlan,
    Ordering,
    ShowPlan,
    filter_operators,
    plan_list,
    plan_show,
    sortable_fields,
)
from pb_headless.query.render import render_record, render_value

__all__ = [
    "OPERATORS",
    "Condition",
    "ListPlan",
    "Operator",
    "Ordering",
    "ParsedQuery",
    "ShowPlan",
    "compile_list",
    "compile_show",
    "fetch_one",
    "filter_operators",
    "parse_query",
    "plan_list",
    "plan_show",
    "relation_select",
    "render_record",
    "render_value",
    "sortable_fields",
]
