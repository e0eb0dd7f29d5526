"""The trigram index that serves `search` on SQLite constructor tables: what it holds, and the query
that asks it for candidates (docs/performance.md, "The search index on SQLite").

`search` means: the case-folded term (`str.casefold`) is contained in the case-folded field. SQLite's
FTS5 `trigram` tokenizer folds case with its own, simpler table, so the index alone could answer
differently. It is therefore only asked for *candidates*, a superset of the matching rows, and the
exact test runs on those:

- A row is a candidate when every trigram of every long term (three characters or more, folded) is
  in the row's indexed text, or when the row carries the marker.
- The marker goes with every row holding a character that the index folds differently from
  `str.casefold` (`ß`, ligatures, `İ`...: `exotic_characters`). Every other character folds alike,
  so for a row without one, "the term is contained" implies "its trigrams are there".
- A term shorter than three characters has no trigram: it narrows nothing, and only the exact test
  applies it.
"""

from __future__ import annotations

import functools
import sqlite3
import sys
from collections.abc import Sequence

MARKER = "\ufdd0" * 3  # a noncharacter: no text of a site holds it
MATCH_KEY = "pb_search_match"  # the bound parameter that carries the query (query/prepared.py)
GRAM = 3


def match_query(terms: Sequence[str]) -> str | None:
    """The FTS5 query for the candidates of these terms; None when no term is long enough to narrow."""
    groups: list[str] = []
    for term in terms:
        folded = term.casefold()
        if len(folded) < GRAM or "\x00" in folded:  # FTS5 reads its query as a C string
            continue
        grams = dict.fromkeys(folded[start : start + GRAM] for start in range(len(folded) - GRAM + 1))
        groups.append(" AND ".join(_quoted(gram) for gram in grams))
    if not groups:
        return None
    return f"({' AND '.join(groups)}) OR {_quoted(MARKER)}"


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@functools.cache
def exotic_characters() -> str:
    """The characters for which this SQLite's trigram folding and `str.casefold` disagree, sorted.

    Found by asking the tokenizer itself: a character whose `casefold()` is one other character is
    indexed three times over, and the folded character's trigram must find it. One that folds to
    several characters (`ß` → `ss`) disagrees by its nature.
    """
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING fts5(text, tokenize='trigram', detail='none')")
        single: list[str] = []
        exotic: list[str] = []
        for point in range(sys.maxunicode + 1):
            if 0xD800 <= point < 0xE000:
                continue  # surrogates are no text
            character = chr(point)
            folded = character.casefold()
            if folded == character:
                continue
            (single if len(folded) == 1 else exotic).append(character)
        connection.executemany(
            "INSERT INTO probe(rowid, text) VALUES (?, ?)", [(ord(c), c * GRAM) for c in single]
        )
        for character in single:
            found = connection.execute(
                "SELECT 1 FROM probe WHERE probe MATCH ? AND rowid = ?",
                (_quoted(character.casefold() * GRAM), ord(character)),
            ).fetchone()
            if found is None:
                exotic.append(character)
    finally:
        connection.close()
    return "".join(sorted(exotic))


@functools.cache
def exotic_glob() -> str:
    """A GLOB pattern true for text holding one of `exotic_characters`, runs of neighbours written as
    ranges (`Ა-Ჺ`). None is ASCII, so none is one of GLOB's own `]`, `-` or `^`."""
    points = [ord(character) for character in exotic_characters()]
    assert all(point > 0x7F for point in points)
    runs: list[list[int]] = []
    for point in points:
        if runs and point == runs[-1][1] + 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    members = "".join(
        chr(first)
        if first == last
        else f"{chr(first)}{chr(last)}"
        if last == first + 1
        else f"{chr(first)}-{chr(last)}"
        for first, last in runs
    )
    return f"*[{members}]*"
