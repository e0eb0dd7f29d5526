"""What the constructor knows about a table: the host's definition of it, and the settings of its API tab.

The host owns `ConstructorTable` (it defines and creates its tables); the library owns `ApiTab`,
stored by `ApiTabStore`. Both check themselves when made, so a mistake names the field or setting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pb_headless.constructor.kinds import FIELD_TYPES, KINDS, MAX_VARCHAR
from pb_headless.registry.declaration import OBJECT_NAME, OPERATIONS, READ_OPERATIONS

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # portable SQL name: PostgreSQL keeps 63 bytes
PRIMARY_KEY = "id"
PUBLISHED = "published"
RESERVED = frozenset({PRIMARY_KEY, PUBLISHED})  # columns every constructor table has anyway
WRITE_OPERATIONS = frozenset(OPERATIONS) - READ_OPERATIONS


class ConstructorError(ValueError):
    """A table definition or API-tab setting cannot be used; the message says which and why."""


@dataclass(frozen=True, slots=True)
class ConstructorField:
    """One field of a constructor table, as the table window defines it."""

    name: str
    type: str
    required: bool = False
    searchable: bool = False
    length: int | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not IDENTIFIER.fullmatch(self.name):
            raise ConstructorError(
                f"field {self.name!r}: a field name is 1-64 of [A-Za-z0-9_], not starting with a digit"
            )
        if self.name.lower() in RESERVED:
            raise ConstructorError(
                f"field '{self.name}': '{PRIMARY_KEY}' and '{PUBLISHED}' are columns "
                "every constructor table has already"
            )
        if self.type not in KINDS:
            raise ConstructorError(
                f"field '{self.name}': unknown type {self.type!r} (known: {', '.join(FIELD_TYPES)})"
            )
        if self.length is not None:
            self._check_length()

    def _check_length(self) -> None:
        kind = KINDS[self.type]
        if not kind.takes_length:
            raise ConstructorError(f"field '{self.name}': a {self.type} field has no length")
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 1:
            raise ConstructorError(f"field '{self.name}': the length is a positive whole number")
        if kind.default_length is not None and self.length > MAX_VARCHAR:
            raise ConstructorError(
                f"field '{self.name}': a {self.type} field holds at most {MAX_VARCHAR} "
                "characters; use a text field for longer values"
            )

    @property
    def max_length(self) -> int | None:
        """The longest value the field takes (None: unbounded text)."""
        return KINDS[self.type].length_of(self.length)


@dataclass(frozen=True, slots=True)
class ConstructorTable:
    """A table made in the constructor: its SQL name, its human title (any script), and its fields.

    Besides `fields`, its SQL table has an integer primary key `id` and a boolean `published`
    column; only rows with `published` true are served (see `create_table`).
    """

    name: str
    title: str = ""
    fields: tuple[ConstructorField, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not IDENTIFIER.fullmatch(self.name):
            raise ConstructorError(
                f"table {self.name!r}: a table name is 1-64 of [A-Za-z0-9_], not starting with a digit"
            )
        object.__setattr__(self, "fields", tuple(self.fields))
        seen: set[str] = set()
        for field in self.fields:
            if not isinstance(field, ConstructorField):
                raise ConstructorError(f"table '{self.name}': fields are ConstructorField values")
            if field.name.lower() in seen:  # MariaDB and SQLite compare column names case-insensitively
                raise ConstructorError(f"table '{self.name}': field '{field.name}' is defined twice")
            seen.add(field.name.lower())

    def field(self, name: str) -> ConstructorField | None:
        return next((field for field in self.fields if field.name == name), None)


@dataclass(frozen=True, slots=True)
class ApiTab:
    """The API tab of one table (docs/constructor.md).

    `enabled` is the switch; `fields` are the ticked fields; `operations` default to read-only;
    `url_name` overrides the transliterated title. `writable`, `filterable` and `sortable` are
    None for their defaults: the ticked fields (writable only when a write operation is on).
    """

    enabled: bool = False
    fields: tuple[str, ...] = ()
    operations: tuple[str, ...] = ("list", "show")
    url_name: str | None = None
    writable: tuple[str, ...] | None = None
    filterable: tuple[str, ...] | None = None
    sortable: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "enabled", bool(self.enabled))
        object.__setattr__(self, "fields", _names("fields", self.fields))
        for key in ("writable", "filterable", "sortable"):
            value = getattr(self, key)
            object.__setattr__(self, key, None if value is None else _names(key, value))
        operations = _names("operations", self.operations)
        unknown = [name for name in operations if name not in OPERATIONS]
        if unknown or not operations:
            raise ConstructorError(
                f"operations: expected some of {', '.join(OPERATIONS)}, got {list(operations)}"
            )
        object.__setattr__(self, "operations", tuple(name for name in OPERATIONS if name in operations))
        url_name = (self.url_name or "").strip() or None
        if url_name is not None and not OBJECT_NAME.fullmatch(url_name):
            raise ConstructorError(
                f"URL name {url_name!r}: use 1-100 of the letters A-Z and a-z, digits, "
                "'_' and '-', not starting with '-'"
            )
        object.__setattr__(self, "url_name", url_name)

    @property
    def writes(self) -> bool:
        """Whether any write operation (create, update, delete) was added."""
        return bool(WRITE_OPERATIONS.intersection(self.operations))


def _names(key: str, value: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    try:
        items = list(value)
    except TypeError:
        raise ConstructorError(f"{key}: expected a list of names, got {value!r}") from None
    if not all(isinstance(item, str) for item in items):
        raise ConstructorError(f"{key}: expected a list of names, got {items!r}")
    return tuple(dict.fromkeys(item.strip() for item in items if item.strip()))
