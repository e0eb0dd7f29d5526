"""Where a published object comes from, in the site owner's words and never as a server path.

The one place the admin pages read an object's source: today a string (`constructor:<table>`,
`component '<name>'`, `code`, or the declaration file's path); when the registry's source becomes
a typed value, only `source_of` changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any


@dataclass(frozen=True, slots=True)
class SourceRef:
    kind: str  # constructor | component | code | declaration
    name: str  # the table or component name; for a declaration file only its file name

    def describe(self) -> str:
        """`the constructor table “news”`, `the declaration file (api.py)` — safe to show anyone signed in."""
        if self.kind == "constructor":
            return f"the constructor table “{self.name}”"
        if self.kind == "component":
            return f"the component “{self.name}”"
        if self.kind == "code":
            return "a registration in the site's code"
        return f"the declaration file ({self.name})" if self.name else "the declaration file"


def source_of(spec: Any) -> SourceRef:
    """The kind and short name of an `ObjectSpec`'s (or a declaration's) source."""
    source = spec.source
    kind = getattr(source, "kind", None)
    if kind is not None:  # a typed source: Source(kind, name); a file is shown by its file name only
        name = str(getattr(source, "name", ""))
        return SourceRef(str(kind), PurePath(name).name if str(kind) == "file" else name)
    text = str(source)
    if text.startswith("constructor:"):
        return SourceRef("constructor", text.split(":", 1)[1])
    if text.startswith("component "):
        return SourceRef("component", text.split(" ", 1)[1].strip("'\""))
    if text == "code":
        return SourceRef("code", "")
    return SourceRef("declaration", PurePath(text).name)
