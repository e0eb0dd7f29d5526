"""The publishing rules of docs/constructor.md: a table and its API tab → a declaration.

| rule              | here                                                                            |
|-------------------|---------------------------------------------------------------------------------|
| Switch            | `tab.enabled` off → not published                                               |
| Field ticking     | the ticked fields that the table defines are the published fields (`id` always) |
| No fields ticked  | not published, even with the switch on                                          |
| Operations        | `tab.operations`, read-only (`list`, `show`) unless write operations are added  |
| Search            | over the published fields marked searchable                                     |
| Validation        | rules derived from each writable field's definition (required, type, length)    |
| URL name          | `tab.url_name`, else the transliterated title, else the table's name            |

A ticked or listed name the table no longer defines is dropped rather than failing: a field removed
in the table window must not take the whole object offline.
"""

from __future__ import annotations

from pb_headless.constructor.kinds import KINDS
from pb_headless.constructor.model import PRIMARY_KEY, PUBLISHED, ApiTab, ConstructorField, ConstructorTable
from pb_headless.constructor.schema import table_for
from pb_headless.constructor.transliteration import transliterate
from pb_headless.registry.declaration import Declaration, check_declaration
from pb_headless.registry.source import Source


def declaration_for(table: ConstructorTable, tab: ApiTab) -> tuple[str, Declaration] | None:
    """The object's name and checked declaration, or None when the table is not published."""
    if unpublished_reason(table, tab) is not None:
        return None
    published = published_fields(table, tab)
    name = tab.url_name or url_name_for(table)
    return name, check_declaration(name, raw_declaration(table, tab, published), source=source_of(table))


def unpublished_reason(table: ConstructorTable, tab: ApiTab) -> str | None:
    """Why the API tab publishes nothing, in the site owner's words; None when it publishes the table."""
    if not tab.enabled:
        return "the API switch is off"
    if not published_fields(table, tab):
        return "no field is ticked, so nothing is exposed even with the switch on"
    return None


def raw_declaration(table: ConstructorTable, tab: ApiTab, published: tuple[str, ...]) -> dict[str, object]:
    """The declaration in the keys of a declaration file, over the table's own SQLAlchemy definition."""
    defined = {field.name: field for field in table.fields}
    whitelist = (PRIMARY_KEY, *published)
    writable = _writable(tab, defined, published)
    return {
        "model": table_for(table),
        "fields": list(published),
        "searchable": [name for name in published if defined[name].searchable],
        "filterable": _listed(tab.filterable, whitelist),
        "sortable": _listed(tab.sortable, whitelist, default=(PRIMARY_KEY, *default_sortable(table))),
        "operations": list(tab.operations),
        "writable": list(writable),
        "rules": {name: rules_for(defined[name]) for name in writable if name in defined},
    }


def published_fields(table: ConstructorTable, tab: ApiTab) -> tuple[str, ...]:
    """The ticked fields the table defines, in the table's own order."""
    ticked = set(tab.fields)
    return tuple(field.name for field in table.fields if field.name in ticked)


def default_sortable(table: ConstructorTable) -> tuple[str, ...]:
    """The fields sortable until the API tab says otherwise: all but long text, which sorts slowly
    and meaninglessly."""
    return tuple(field.name for field in table.fields if field.type != "text")


def url_name_for(table: ConstructorTable) -> str:
    """docs/constructor.md: "a transliteration of the table name" (`Новости компании` →
    `novosti_kompanii`)."""
    return transliterate(table.title) or transliterate(table.name) or table.name


def source_of(table: ConstructorTable) -> Source:
    """The source named in errors and logs (`constructor:<table>`); a broken one is skipped, not fatal."""
    return Source.constructor(table.name)


def rules_for(field: ConstructorField) -> str:
    """`required` for a required field, the type's rules, and `max:N` for a length."""
    rules = ["required"] if field.required else []
    rules += KINDS[field.type].rules
    if field.max_length is not None:
        rules.append(f"max:{field.max_length}")
    return "|".join(rules)


def _writable(
    tab: ApiTab, defined: dict[str, ConstructorField], published: tuple[str, ...]
) -> tuple[str, ...]:
    if not tab.writes:
        return ()
    if tab.writable is None:
        return published
    # `published` may be listed so that clients can hide rows; the primary key is never written.
    return tuple(name for name in tab.writable if name in defined or name == PUBLISHED)


def _listed(
    chosen: tuple[str, ...] | None, whitelist: tuple[str, ...], default: tuple[str, ...] | None = None
) -> list[str]:
    if chosen is None:
        return [name for name in whitelist if default is None or name in default]
    return [name for name in chosen if name in whitelist]
