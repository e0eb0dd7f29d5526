"""The bounds on one list query, checked before any SQL is built (docs/query.md, "Limits").

A real client never meets them; a hostile or broken one is refused with 422 `validation_failed`,
keyed by the parameter as written, instead of reaching a database's own limit (SQLite's expression
depth, PostgreSQL's 32,767 bound parameters) or costing seconds of scanning. The OpenAPI document
states the same numbers in each parameter's description, read from here.
"""

from __future__ import annotations

MAX_SEARCH_TERMS = 12  # different whitespace-separated words in one `search` (all `search` together)
# Words × searchable fields: every pair is one case-folded LIKE over every row the query reaches,
# so an object searched in more fields takes fewer words (12 in one field, 6 in two, 4 in three).
MAX_SEARCH_PAIRS = 12
MAX_FILTER_CONDITIONS = 50  # `filter[...]` conditions in one query, all fields together
MAX_TEXT_LENGTH = 500  # characters of one `like` value or one `search` value
MAX_LIST_VALUES = 100  # values of one `in` / `nin` list
MAX_BOUND_VALUES = 2000  # values bound into the statement in all (filters and search terms)


def most_search_terms(searchable_fields: int) -> int:
    """The most different words one `search` may have on an object searched in that many fields."""
    return max(1, min(MAX_SEARCH_TERMS, MAX_SEARCH_PAIRS // max(searchable_fields, 1)))


# A search's count is exact up to this many rows; past it `meta.total` is an estimate, flagged
# `meta.total_estimated` (docs/query.md, "Count control"): counting every match of a common word
# cost seconds, where counting to here costs about what the page does.
SEARCH_COUNT_EXACT = 10_000
