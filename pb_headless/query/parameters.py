"""Which bound parameter carries which plan value: noted while a plan compiles, for the statement cache.

The compiler passes every value it puts into SQL through `record_parameter`; while `recording()` is
active the parameter, the plan's value and the conversion between them are noted in order, so a
statement compiled once can run again with the values of another plan of the same shape.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa


@dataclass(frozen=True, slots=True)
class RecordedParameter:
    parameter: sa.BindParameter[Any]
    value: Any  # the plan's value
    convert: Callable[[Any], Any] | None  # plan value → parameter value (None: the same)
    slot: Any = None  # where the plan's values hold it, when not in filter order (a cursor's values)


_recorded: ContextVar[list[RecordedParameter] | None] = ContextVar("pb_parameter_recorded", default=None)


def record_parameter(
    parameter: sa.BindParameter[Any], value: Any, convert: Callable[[Any], Any] | None, slot: Any = None
) -> None:
    notes = _recorded.get()
    if notes is not None:
        notes.append(RecordedParameter(parameter, value, convert, slot))


@contextlib.contextmanager
def recording() -> Iterator[list[RecordedParameter]]:
    notes: list[RecordedParameter] = []
    token = _recorded.set(notes)
    try:
        yield notes
    finally:
        _recorded.reset(token)
