"""The error raised when a declaration's rules cannot be compiled."""

from __future__ import annotations

from dataclasses import dataclass


class RuleError(ValueError):
    """A declaration's rule is unknown or does not fit the column.

    The message names the object, the field and the rule.
    """


@dataclass(frozen=True)
class FieldRef:
    """Where a rule was declared, so every compile error can name the object and the field."""

    object_name: str
    field: str

    def error(self, problem: str) -> RuleError:
        return RuleError(f"object {self.object_name!r}, field {self.field!r}: {problem}")
