"""Which bound parameter carries which plan value: noted by the compiler, for the statement cache.

The compiler binds every value it puts into SQL through one `Binder` per compile, which also says
for which database the statement is (the backend's facts). A binder made with `recording=True`
notes each parameter, the plan's value and the conversion between them, in order; the compiler
reads them from the binder it passed (`Binder.parameters`), so a statement compiled once can run again with
the values of another plan of the same shape (query/prepared.py). Nothing is ambient: the binder is
an argument of every compiler function that binds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pb_headless.database.backends import Backend, backend_facts


@dataclass(frozen=True, slots=True)
class RecordedParameter:
    parameter: sa.BindParameter[Any]
    value: Any  # the plan's value
    convert: Callable[[Any], Any] | None  # plan value → parameter value (None: the same)
    slot: Any = None  # where the plan's values hold it, when not in filter order (a cursor's values)


class Binder:
    """One compile's parameters, for one database: `facts` is its backend (or the backend's class,
    for a statement compiled for a named dialect), asked for the facts that change the SQL."""

    __slots__ = ("facts", "notes")

    def __init__(self, facts: Backend | type[Backend] | str, recording: bool = False) -> None:
        self.facts = backend_facts(facts) if isinstance(facts, str) else facts
        self.notes: list[RecordedParameter] | None = [] if recording else None

    @property
    def name(self) -> str:
        """The dialect's name, for what SQLAlchemy itself keys by it (functions, hints)."""
        return self.facts.name

    def bind(
        self, value: Any, type_: Any, convert: Callable[[Any], Any] | None = None, slot: Any = None
    ) -> sa.BindParameter[Any]:
        """Every value a plan puts into SQL passes here: a bound parameter, noted when recording."""
        parameter = sa.literal(convert(value) if convert else value, type_)
        if self.notes is not None:
            self.notes.append(RecordedParameter(parameter, value, convert, slot))
        return parameter

    @property
    def parameters(self) -> tuple[RecordedParameter, ...]:
        """The parameters bound so far, in the order the compiler bound them (empty unless recording)."""
        return tuple(self.notes or ())


def binder_for(facts: Binder | Backend | type[Backend] | str) -> Binder:
    """A compile's binder: the one given (recording for the statement cache), or a new one."""
    return facts if isinstance(facts, Binder) else Binder(facts)
