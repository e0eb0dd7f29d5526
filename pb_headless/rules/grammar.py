"""Parses rule strings such as ``required|string|max:200`` into typed `Rule` values."""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from pb_headless.rules.errors import FieldRef

BARE_RULES = frozenset(
    {
        "required",
        "nullable",
        "string",
        "integer",
        "numeric",
        "boolean",
        "array",
        "email",
        "url",
        "uuid",
        "date",
        "alpha",
        "alpha_num",
        "alpha_dash",
        "unique",
    }
)
SIZE_RULES = frozenset({"min", "max", "size", "between"})
OPTION_RULES = frozenset({"in", "not_in"})
RULE_NAMES = BARE_RULES | SIZE_RULES | OPTION_RULES | {"regex"}

_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?", re.ASCII)
# PHP's preg modifiers that have a Python counterpart; `u` only switches Unicode on (see _compile).
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "u": 0}


@dataclass(frozen=True)
class Rule:
    """One parsed rule: `numbers` for the size rules, `options` for in/not_in, `pattern` for regex."""

    name: str
    text: str
    numbers: tuple[Decimal, ...] = ()
    options: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    source: str = ""
    flags: str = ""


def parse_rules(spec: str | Sequence[str], ref: FieldRef) -> tuple[Rule, ...]:
    """All rules of one field; a list of rule strings reads as if joined by `|`."""
    if isinstance(spec, str):
        texts: Sequence[str] = [spec]
    elif isinstance(spec, Sequence) and all(isinstance(text, str) for text in spec):
        texts = spec
    else:
        raise ref.error(f"expected a rule string such as 'required|string', got {spec!r}")
    return tuple(_parse_one(segment, ref) for text in texts for segment in split_rules(text, ref))


def split_rules(text: str, ref: FieldRef) -> list[str]:
    """Split on `|`, except inside a `regex:/.../` argument, whose pattern may well contain `|`."""
    segments: list[str] = []
    start = 0
    while start <= len(text):
        head = len(text) - len(text[start:].lstrip())
        if text.startswith("regex:", head):
            end = _regex_end(text, head + len("regex:"), ref)
        else:
            end = text.find("|", start)
            end = len(text) if end == -1 else end
        segment = text[start:end].strip()
        if segment:
            segments.append(segment)
        start = end + 1
    return segments


def _regex_end(text: str, at: int, ref: FieldRef) -> int:
    """The index just past a `/pattern/flags` argument (the `|` or the end of the text)."""
    malformed = ref.error(f"rule {text[at - 6 :]!r}: write the pattern as regex:/pattern/ (flags after it)")
    if not text.startswith("/", at):
        raise malformed
    index = at + 1
    while index < len(text) and text[index] != "/":
        # A backslash escapes the next character, the delimiter included, as in PHP's preg.
        index += 2 if text[index] == "\\" else 1
    if index >= len(text):
        raise malformed
    index += 1
    while index < len(text) and text[index].isalpha():
        index += 1
    if text[index:].strip() and not text[index:].lstrip().startswith("|"):
        raise malformed
    bar = text.find("|", index)
    return len(text) if bar == -1 else bar


def _parse_one(segment: str, ref: FieldRef) -> Rule:
    name, colon, argument = segment.partition(":")
    name = name.strip()
    if name not in RULE_NAMES:
        raise ref.error(f"unknown rule {name!r}")
    if name in BARE_RULES:
        if colon:
            raise ref.error(f"rule {segment!r}: {name!r} takes no argument")
        return Rule(name, segment)
    if name == "regex":
        return _regex_rule(segment, argument.strip(), ref)
    if not argument:
        raise ref.error(f"rule {segment!r}: {name!r} needs an argument, as in {_EXAMPLES[name]!r}")
    if name in OPTION_RULES:
        return Rule(name, segment, options=_options(segment, argument, ref))
    return Rule(name, segment, numbers=_numbers(name, segment, argument, ref))


_EXAMPLES = {
    "min": "min:3",
    "max": "max:200",
    "size": "size:5",
    "between": "between:1,10",
    "in": "in:draft,published",
    "not_in": "not_in:admin,root",
}


def _numbers(name: str, segment: str, argument: str, ref: FieldRef) -> tuple[Decimal, ...]:
    parts = [part.strip() for part in argument.split(",")]
    wanted = 2 if name == "between" else 1
    if len(parts) != wanted or not all(_NUMBER.fullmatch(part) for part in parts):
        raise ref.error(f"rule {segment!r}: expected {_EXAMPLES[name]!r}")
    numbers = tuple(Decimal(part) for part in parts)
    if numbers[0] > numbers[-1]:
        raise ref.error(f"rule {segment!r}: the lower bound is greater than the upper bound")
    return numbers


def _options(segment: str, argument: str, ref: FieldRef) -> tuple[str, ...]:
    # Laravel reads in/not_in values as CSV, so `in:"a,b",c` offers a value that contains a comma.
    try:
        return tuple(next(csv.reader([argument], strict=True)))
    except csv.Error as error:
        raise ref.error(f"rule {segment!r}: the values do not read as CSV ({error})") from None


def _regex_rule(segment: str, argument: str, ref: FieldRef) -> Rule:
    closing = argument.rfind("/")
    source, flags = argument[1:closing], argument[closing + 1 :]
    unknown = sorted(set(flags) - set(_FLAGS))
    if unknown:
        raise ref.error(f"rule {segment!r}: unsupported regex flag {''.join(unknown)!r} (use i, m, s, x, u)")
    return Rule("regex", segment, pattern=_compile(segment, source, flags, ref), source=source, flags=flags)


def _compile(segment: str, source: str, flags: str, ref: FieldRef) -> re.Pattern[str]:
    # Without /u, PCRE (and ECMAScript) read \d, \w and \b as ASCII; Python would read them as Unicode.
    bits = 0 if "u" in flags else re.ASCII
    for flag in flags:
        bits |= _FLAGS[flag]
    try:
        return re.compile(source, bits)
    except re.error as error:
        raise ref.error(f"rule {segment!r}: the pattern does not compile ({error})") from None
