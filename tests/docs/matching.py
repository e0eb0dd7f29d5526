"""Comparing the output a page shows with the output a command printed (pure; see docs/writing-docs.md).

`…` stands for what differs between runs: as a whole JSON value it matches any value; inside a string
or a text line it matches any characters; `"…": "…"` in an object allows keys that are not shown; a
last list item `"…"` allows more items; a text line holding only `…` matches any number of lines.
"""

from __future__ import annotations

import json
import re
from typing import Any

ELLIPSIS = "…"


def difference(lang: str, shown: str, printed: str) -> str | None:
    """None when `printed` is what `shown` shows, else a description of the first difference."""
    if lang == "json":
        try:
            expected, actual = json_values(shown), json_values(printed)
        except ValueError as error:
            return f"not JSON: {error}\n--- printed ---\n{printed}"
        if len(expected) != len(actual):
            return f"{len(actual)} JSON values printed, {len(expected)} shown\n--- printed ---\n{printed}"
        for number, (one, other) in enumerate(zip(expected, actual, strict=True)):
            found = json_difference(one, other, f"value {number + 1}")
            if found:
                return f"{found}\n--- printed ---\n{printed}"
        return None
    return text_difference(shown, printed)


def json_values(text: str) -> list[Any]:
    """Every JSON value in `text`, one after the other (curl prints bodies without separators)."""
    decoder, values, position = json.JSONDecoder(), [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return values
        value, position = decoder.raw_decode(text, position)
        values.append(value)


def json_difference(shown: Any, actual: Any, where: str) -> str | None:
    if shown == ELLIPSIS:
        return None
    if isinstance(shown, dict):
        return _object_difference(shown, actual, where)
    if isinstance(shown, list):
        return _list_difference(shown, actual, where)
    if isinstance(shown, str) and ELLIPSIS in shown:
        matched = isinstance(actual, str) and re.fullmatch(_pattern(shown), actual, re.S)
        return None if matched else f"{where}: {actual!r} does not match {shown!r}"
    if type(shown) is not type(actual) or shown != actual:
        return f"{where}: printed {actual!r}, the page shows {shown!r}"
    return None


def _object_difference(shown: dict[str, Any], actual: Any, where: str) -> str | None:
    if not isinstance(actual, dict):
        return f"{where}: printed {actual!r}, the page shows an object"
    keys = [key for key in shown if key != ELLIPSIS]
    missing = [key for key in keys if key not in actual]
    if missing:
        return f"{where}: keys {missing} are shown but not printed (printed: {list(actual)})"
    extra = [key for key in actual if key not in shown]
    if extra and ELLIPSIS not in shown:
        return f'{where}: keys {extra} are printed but not shown (add "…": "…" to allow more keys)'
    for key in keys:
        found = json_difference(shown[key], actual[key], f"{where}.{key}")
        if found:
            return found
    return None


def _list_difference(shown: list[Any], actual: Any, where: str) -> str | None:
    if not isinstance(actual, list):
        return f"{where}: printed {actual!r}, the page shows a list"
    open_ended = bool(shown) and shown[-1] == ELLIPSIS
    items = shown[:-1] if open_ended else shown
    if len(actual) < len(items) or (not open_ended and len(actual) != len(items)):
        return f"{where}: {len(actual)} items printed, {len(items)} shown"
    for index, item in enumerate(items):
        found = json_difference(item, actual[index], f"{where}[{index}]")
        if found:
            return found
    return None


def text_difference(shown: str, printed: str) -> str | None:
    expected = _lines(shown)
    any_lines = r"(?:[^\n]*\n)*?"
    pattern = "".join(any_lines if line.strip() == ELLIPSIS else _pattern(line) + r"\n" for line in expected)
    if re.fullmatch(pattern, "".join(line + "\n" for line in _lines(printed))):
        return None
    return f"the printed text does not match the page\n--- shown ---\n{shown}--- printed ---\n{printed}"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").split("\n")] if text.strip() else []


def _pattern(shown: str) -> str:
    return ".*?".join(re.escape(part) for part in shown.split(ELLIPSIS))
