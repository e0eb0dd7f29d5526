"""The five operations on a published object, with what each needs: its scope kind, methods and path."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

MAX_BATCH_OPERATIONS = 100  # operations one `POST /batch` may hold (docs/writes.md, "Atomic batches")


class ScopeKind(StrEnum):
    """Which of an object's two scopes an operation needs (`<object>.read` or `<object>.write`)."""

    READ = "read"
    WRITE = "write"


class PathKind(StrEnum):
    """Where an operation is served: `/objects/{name}` or `/objects/{name}/{id}`."""

    COLLECTION = "collection"
    RECORD = "record"


class Operation(StrEnum):
    """An operation a declaration may allow. A `StrEnum`: `Operation.LIST == "list"` holds."""

    LIST = "list"
    SHOW = "show"
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"

    @property
    def scope_kind(self) -> ScopeKind:
        return ScopeKind.READ if self in (Operation.LIST, Operation.SHOW) else ScopeKind.WRITE

    @property
    def path_kind(self) -> PathKind:
        return PathKind.COLLECTION if self in (Operation.LIST, Operation.CREATE) else PathKind.RECORD

    @property
    def methods(self) -> tuple[str, ...]:
        """The HTTP methods that ask for it; HEAD is served wherever GET is."""
        return _METHODS[self]

    @classmethod
    def addressed_by(cls, path_kind: PathKind | str, method: str) -> Operation | None:
        """The operation `method` asks for on a path of this kind, or None (a 405)."""
        return _BY_REQUEST.get((path_kind, method))

    @classmethod
    def allowed_methods(cls, path_kind: PathKind | str, allowed: Iterable[str]) -> tuple[str, ...]:
        """The `Allow` header's methods on a path of this kind, for an object allowing `allowed`."""
        allowed = set(allowed)
        return tuple(
            method
            for operation in cls
            if operation.path_kind == path_kind and operation in allowed
            for method in operation.methods
        )


READ_OPERATIONS = frozenset(operation for operation in Operation if operation.scope_kind is ScopeKind.READ)
WRITE_OPERATIONS = frozenset(Operation) - READ_OPERATIONS

_METHODS = {
    Operation.LIST: ("GET", "HEAD"),
    Operation.SHOW: ("GET", "HEAD"),
    Operation.CREATE: ("POST",),
    Operation.UPDATE: ("PATCH",),
    Operation.DELETE: ("DELETE",),
}
_BY_REQUEST: dict[tuple[str, str], Operation] = {
    (operation.path_kind, method): operation for operation in Operation for method in operation.methods
}
