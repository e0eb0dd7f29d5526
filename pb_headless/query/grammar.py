"""The list query-string grammar: decoded `(key, value)` pairs in, small typed terms out (no HTTP, no SQL).

The grammar knows the shape of each parameter, not the object: whether `filter[secret]` names a
filterable field is the planner's question. Every term keeps its text as written and its position in
the query string, so `meta.ignored` and 422 `details` can name exactly what the client sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pb_headless.query.operators import DEFAULT_OPERATOR, Operator
from pb_headless.query.operators import LIST_OPERATORS as LIST_OPERATORS  # read by pb_headless.openapi

OPERATORS = frozenset(Operator)
LARGEST_NUMBER = 2**31 - 1
LIST_PARAMETERS = ("sort", "fields", "with")
NUMBER_PARAMETERS = ("limit", "offset", "page")
TEXT_PARAMETERS = ("after", "before", "count")  # cursors (query/cursors.py) and count control
# The parameters a read takes, by name (`filter` stands for every `filter...` key). A name outside
# the set a read takes is ignored and named as written, `limt=1` as `limt=1` (docs/query.md): a typo
# must not pass for a parameter the API read.
LIST_QUERY = frozenset({"filter", "search", *LIST_PARAMETERS, *NUMBER_PARAMETERS, *TEXT_PARAMETERS})
SHOW_QUERY = frozenset({"fields", "with"})

_FILTER_KEY = re.compile(r"filter\[([^\[\]]+)\](?:\[([^\[\]]+)\])?(\[\])?")
_ASCII_DIGITS = re.compile(r"[0-9]+")
_OPERATORS_BY_NAME = {str(operator): operator for operator in Operator}


@dataclass(frozen=True, slots=True)
class FilterTerm:
    """`filter[field]=v` (operator `eq`) or `filter[field][op]=v`; `values` is already split."""

    field: str
    operator: Operator
    values: tuple[str, ...]
    written: str  # the key as written: `filter[price][gte]`
    position: int


@dataclass(frozen=True, slots=True)
class ListItem:
    """One comma-separated item of `sort`, `fields` or `with`."""

    name: str
    written: str  # `sort=-secret`, `fields=secret`, `with=author.posts`
    position: int
    descending: bool = False  # only `sort` items use it


@dataclass(frozen=True, slots=True)
class NumberTerm:
    value: int
    written: str  # `limit=50`
    position: int


@dataclass(frozen=True, slots=True)
class TextTerm:
    """A parameter taken whole: `after=<cursor>`, `count=none`."""

    value: str
    written: str  # `count=none`
    position: int


@dataclass(frozen=True, slots=True)
class SearchText:
    terms: tuple[str, ...]
    written: str  # `search=red shoes`
    position: int


@dataclass(frozen=True, slots=True)
class Ignored:
    written: str
    position: int


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    filters: tuple[FilterTerm, ...] = ()
    search: tuple[SearchText, ...] = ()
    sort: tuple[ListItem, ...] = ()
    fields: tuple[ListItem, ...] = ()
    relations: tuple[ListItem, ...] = ()
    limit: NumberTerm | None = None
    offset: NumberTerm | None = None
    page: NumberTerm | None = None
    after: TextTerm | None = None
    before: TextTerm | None = None
    count: TextTerm | None = None
    ignored: tuple[Ignored, ...] = ()


def parse_query(
    pairs: Iterable[tuple[str, str]],
    accepted: frozenset[str] = LIST_QUERY,
    own: frozenset[str] = frozenset(),
) -> ParsedQuery:
    """Parse percent-decoded query pairs (Starlette's `query_params.multi_items()`).

    `accepted` names the parameters of the grammar the read takes; `own` those the endpoint reads
    itself (the change feed's `since`). Any other pair (`limt=1`, `utm_source=x`) is ignored and
    named as written; links keep it all the same.
    """
    builder = _Builder()
    for position, (key, value) in enumerate(pairs):
        name = "filter" if key == "filter" or key.startswith("filter[") else key
        if name not in accepted:
            if name not in own:
                builder.ignored.append(Ignored(f"{key}={value}", position))
        elif name == "filter":
            builder.add_filter(key, value, position)
        elif key == "search":
            builder.add_search(value, position)
        elif key in LIST_PARAMETERS:
            builder.add_list(key, value, position)
        elif key in NUMBER_PARAMETERS:
            builder.add_number(key, value, position)
        elif key in TEXT_PARAMETERS:
            builder.add_text(key, value, position)
    return builder.build()


def split_list(value: str) -> tuple[str, ...]:
    """The comma-separated values of `in`, `nin` and `between`, kept exactly as written."""
    return tuple(value.split(","))


class _Builder:
    """Collects terms in query-string order; repeated `[]` filter pairs merge into one term."""

    def __init__(self) -> None:
        self.filters: list[FilterTerm] = []
        self.repeated: dict[str, int] = {}  # `filter[f][in][]` key -> index in self.filters
        self.search: list[SearchText] = []
        self.lists: dict[str, list[ListItem]] = {name: [] for name in LIST_PARAMETERS}
        self.numbers: dict[str, NumberTerm] = {}
        self.texts: dict[str, TextTerm] = {}
        self.ignored: list[Ignored] = []

    def add_filter(self, key: str, value: str, position: int) -> None:
        match = _FILTER_KEY.fullmatch(key)
        if match is None:
            self.ignored.append(Ignored(key, position))
            return
        field, name, brackets = match.group(1), match.group(2), match.group(3)
        operator = DEFAULT_OPERATOR if name is None else _OPERATORS_BY_NAME.get(name)
        if operator is None or (brackets and not operator.takes_list):
            self.ignored.append(Ignored(key, position))
            return
        if not brackets:
            values = split_list(value) if operator.takes_list else (value,)
            self.filters.append(FilterTerm(field, operator, values, key, position))
        elif key in self.repeated:
            index = self.repeated[key]
            term = self.filters[index]
            self.filters[index] = FilterTerm(field, operator, (*term.values, value), key, term.position)
        else:
            self.repeated[key] = len(self.filters)
            self.filters.append(FilterTerm(field, operator, (value,), key, position))

    def add_search(self, value: str, position: int) -> None:
        terms = tuple(value.split())
        if terms:  # docs/query.md: an empty search is not an ignored parameter
            self.search.append(SearchText(terms, f"search={value}", position))

    def add_list(self, key: str, value: str, position: int) -> None:
        # A repeated `sort=a&sort=b` reads as `sort=a,b`.
        for raw in value.split(","):
            item = raw.strip()
            if not item:
                continue
            descending = key == "sort" and item.startswith("-")
            name = item[1:].strip() if descending else item
            self.lists[key].append(ListItem(name, f"{key}={item}", position, descending))

    def add_number(self, key: str, value: str, position: int) -> None:
        written = f"{key}={value}"
        # Leading zeros are digits too; strip them before int() so a 5000-digit value cannot trip
        # Python's limit on converting long strings.
        digits = value.lstrip("0") or "0"
        number = int(digits) if _ASCII_DIGITS.fullmatch(value) and len(digits) <= 10 else None
        if number is None or number > LARGEST_NUMBER or (key == "page" and number == 0):
            self.ignored.append(Ignored(written, position))
            return
        earlier = self.numbers.get(key)
        if earlier is not None:  # the last one wins; the overridden one was dropped, so say so
            self.ignored.append(Ignored(earlier.written, earlier.position))
        self.numbers[key] = NumberTerm(number, written, position)

    def add_text(self, key: str, value: str, position: int) -> None:
        earlier = self.texts.get(key)
        if earlier is not None:  # the last one wins, as for numbers
            self.ignored.append(Ignored(earlier.written, earlier.position))
        self.texts[key] = TextTerm(value, f"{key}={value}", position)

    def build(self) -> ParsedQuery:
        return ParsedQuery(
            filters=tuple(self.filters),
            search=tuple(self.search),
            sort=tuple(self.lists["sort"]),
            fields=tuple(self.lists["fields"]),
            relations=tuple(self.lists["with"]),
            limit=self.numbers.get("limit"),
            offset=self.numbers.get("offset"),
            page=self.numbers.get("page"),
            after=self.texts.get("after"),
            before=self.texts.get("before"),
            count=self.texts.get("count"),
            ignored=tuple(self.ignored),
        )
