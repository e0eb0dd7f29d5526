"""The constructor's table form as data: the new field rows, the existing fields kept, what is removed.

The page adds and removes field rows in the browser, so row indexes have gaps: every
`field-<i>-label`/`-name` pair present is a row, in index order. Existing fields of an edited table
come as `existing-<name>-label`/`-searchable`, and `existing-<name>-remove` when ticked for removal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pb_headless.constructor import ConstructorError, ConstructorField, ConstructorTable, transliterate

ROW_KEY = re.compile(r"field-(\d{1,4})-(?:label|name)")
MAX_FIELDS = 100


@dataclass(frozen=True)
class TableForm:
    title: str
    kept: tuple[ConstructorField, ...]
    added: tuple[ConstructorField, ...]
    removed: tuple[ConstructorField, ...]


def _value(form: Mapping[str, Any], key: str) -> str:
    raw = form.get(key)
    return raw.strip() if isinstance(raw, str) else ""


def row_indexes(form: Mapping[str, Any]) -> list[int]:
    """The field rows present in the form, in the order the page shows them."""
    found = {int(match.group(1)) for key in form if (match := ROW_KEY.fullmatch(str(key)))}
    return sorted(found)[:MAX_FIELDS]


def new_fields(form: Mapping[str, Any]) -> list[ConstructorField]:
    """The filled new field rows; an empty row is skipped, a bad one named by its label."""
    fields = []
    for index in row_indexes(form):
        label, name = _value(form, f"field-{index}-label"), _value(form, f"field-{index}-name")
        if not label and not name:
            continue
        length = _value(form, f"field-{index}-length")
        shown = label or name
        if length and not (length.isascii() and length.isdigit() and 0 < int(length) < 100000):
            raise ConstructorError(f"field “{shown}”: the length is a whole number such as 200")
        try:
            fields.append(
                ConstructorField(
                    name=name or name_from(label),
                    type=_value(form, f"field-{index}-type") or "string",
                    required=bool(_value(form, f"field-{index}-required")),
                    searchable=bool(_value(form, f"field-{index}-searchable")),
                    length=int(length) if length else None,
                    label=label or None,
                )
            )
        except ConstructorError as refused:
            raise ConstructorError(f"field “{shown}”: {_reason(refused)}") from None
    return fields


def table_form(form: Mapping[str, Any], table: ConstructorTable | None = None) -> TableForm:
    """The whole submitted form; for an edited table, its fields kept (with new labels) and removed."""
    kept: list[ConstructorField] = []
    removed: list[ConstructorField] = []
    for field in table.fields if table else ():
        prefix = f"existing-{field.name}-"
        if _value(form, prefix + "remove"):
            removed.append(field)
            continue
        label = _value(form, prefix + "label") or None
        kept.append(replace(field, label=label, searchable=bool(_value(form, prefix + "searchable"))))
    return TableForm(_value(form, "title"), tuple(kept), tuple(new_fields(form)), tuple(removed))


def name_from(label: str) -> str:
    name = transliterate(label)
    return f"f_{name}" if name[:1].isdigit() else name


def _reason(error: ConstructorError) -> str:
    """The library's message without its own `field 'x':` prefix, which the caller words for people."""
    text = str(error)
    return text.split(": ", 1)[1] if text.startswith("field ") and ": " in text else text


def sentence(error: Exception) -> str:
    """A one-line refusal as a sentence: capital first letter, full stop."""
    text = str(error).strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
