"""The unit a document is assembled from: one operation with the scope it needs and what it refers to."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Schema = dict[str, Any]


@dataclass(frozen=True, slots=True)
class OperationPart:
    """One documented operation; built once per registry version and shared by every document.

    `scope` is what a token needs to call it (None: any live token). `components` are the component
    schemas, parameters and responses it refers to beyond the shared ones, by section
    (`{"schemas": {...}}`), so a document carries only what its operations use. `section` is where it
    goes: `paths` (keyed by `path`), or `webhooks` (keyed by the webhook's name, in `path`), for the
    requests the site sends rather than answers. `variant` (scope, held) shows the part only to a token
    that holds (True) or lacks (False) that scope as well, where the answer differs between the two:
    a write by a token that may not read the object answers with the key alone.
    """

    path: str
    method: str
    scope: str | None
    operation: Schema
    components: Mapping[str, Mapping[str, Schema]] = field(default_factory=dict)
    section: str = "paths"
    variant: tuple[str, bool] | None = None

    def is_callable_with(self, has_scope: Callable[[str], bool]) -> bool:
        if self.scope is not None and not has_scope(self.scope):
            return False
        return self.variant is None or has_scope(self.variant[0]) == self.variant[1]


def plain(value: Any) -> Any:
    """`value` with every string a plain `str`: column names are SQLAlchemy's `quoted_name`, a `str`
    subclass that some JSON encoders (orjson) refuse as a key."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return str(value) if isinstance(value, str) else value


def plain_part(part: OperationPart) -> OperationPart:
    components = {section: plain(dict(entries)) for section, entries in part.components.items()}
    operation = plain(part.operation)
    return OperationPart(
        part.path, part.method, part.scope, operation, components, part.section, part.variant
    )


@dataclass(frozen=True, slots=True)
class Tag:
    name: str
    description: str

    def as_dict(self) -> Schema:
        return {"name": self.name, "description": self.description}


@dataclass(frozen=True, slots=True)
class Parts:
    """Everything one registry version documents, in document order."""

    tags: tuple[Tag, ...]
    operations: tuple[OperationPart, ...]
