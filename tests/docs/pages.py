"""Reading the documentation: its fenced blocks, the marker before each, and the output a command shows.

The convention is written down once, in docs/writing-docs.md; this module is its only reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)\s*$")
MARKER = re.compile(
    r"^<!--\s*(?P<kind>file|excerpt|fragment|server|not run)(?::\s*(?P<argument>.*?))?\s*-->$"
)
COMMANDS = frozenset({"bash", "sh", "shell"})
OUTPUTS = frozenset({"json", "text"})


@dataclass(frozen=True)
class Block:
    """One fenced block; `output` is the block showing what a command or request prints."""

    page: Path
    line: int
    lang: str
    body: str
    marker: str | None = None
    argument: str | None = None
    output: Block | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPOSITORY)}:{self.line}"

    @property
    def is_command(self) -> bool:
        return self.lang in COMMANDS and self.marker not in ("not run", "server")

    @property
    def is_request(self) -> bool:
        return self.lang == "http" and self.marker != "not run"

    @property
    def is_repository_file(self) -> bool:
        return self.marker == "file" and (REPOSITORY / (self.argument or "")).is_file()

    @property
    def is_page_file(self) -> bool:
        return self.marker == "file" and not self.is_repository_file


def documentation_pages() -> list[Path]:
    return [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks in order; an output block is attached to its command, not listed."""
    lines = page.read_text().split("\n")
    found: list[Block] = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = _closing(lines, index, fence["indent"], page)
        width = len(fence["indent"])
        body = "\n".join(line[width:] for line in lines[index + 1 : end]) + "\n"
        marker = MARKER.match(lines[index - 1].strip()) if index else None
        block = Block(
            page,
            index + 1,
            fence["lang"],
            body,
            marker["kind"] if marker else None,
            marker["argument"] if marker else None,
        )
        previous = found[-1] if found else None
        if (
            previous is not None
            and (previous.is_command or previous.is_request)
            and block.lang in OUTPUTS
            and marker is None
            and previous.output is None
            and _only_blank_between(lines, previous, index)
        ):
            found[-1] = Block(**{**previous.__dict__, "output": block})
        else:
            found.append(block)
        index = end + 1
    return found


def _closing(lines: list[str], start: int, indent: str, page: Path) -> int:
    for index in range(start + 1, len(lines)):
        if lines[index].rstrip() == indent + "```" or lines[index].strip() == "```":
            return index
    raise AssertionError(f"{page}:{start + 1}: a fenced block that never closes")


def _only_blank_between(lines: list[str], previous: Block, start: int) -> bool:
    closing = previous.line + previous.body.count("\n")  # 0-based index of the previous block's fence end
    return all(not line.strip() for line in lines[closing + 1 : start])
