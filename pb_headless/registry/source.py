"""Where a declaration comes from: the declaration file, code, a satellite component or a constructor table.

A `Source` is a kind and a name, so code asks `source.is_constructor` instead of parsing text; its
`str()` is the text a site owner reads at the start of every `DeclarationError` and log line.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SourceKind(StrEnum):
    FILE = "file"
    CODE = "code"
    COMPONENT = "component"
    CONSTRUCTOR = "constructor"


@dataclass(frozen=True, slots=True)
class Source:
    """A kind and a name: the file's path, the component's name, the constructor table's name; for
    code, a label (`code` unless `register(..., source="...")` names another)."""

    kind: SourceKind
    name: str

    @classmethod
    def file(cls, path: object) -> Source:
        return cls(SourceKind.FILE, str(path))

    @classmethod
    def code(cls, label: str = "code") -> Source:
        return cls(SourceKind.CODE, label)

    @classmethod
    def component(cls, name: str) -> Source:
        return cls(SourceKind.COMPONENT, name)

    @classmethod
    def constructor(cls, table: str) -> Source:
        return cls(SourceKind.CONSTRUCTOR, table)

    @classmethod
    def of(cls, source: Source | str) -> Source:
        """A `Source` as given, or a label a host gave as text (shown as written)."""
        return source if isinstance(source, Source) else cls.code(source)

    @property
    def is_constructor(self) -> bool:
        """A constructor table: when it cannot be served it is logged and left out, never fatal."""
        return self.kind is SourceKind.CONSTRUCTOR

    def __str__(self) -> str:
        if self.kind is SourceKind.COMPONENT:
            return f"component '{self.name}'"
        if self.kind is SourceKind.CONSTRUCTOR:
            return f"constructor:{self.name}"
        return self.name
