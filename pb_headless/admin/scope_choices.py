"""Scopes as the token form offers and checks them: chosen from what is published, typed freely too.

Pure: the published objects' scope names and the custom routes' scopes come in, the choices and the
problems of a submitted list go out. A scope that matches nothing published is allowed (an object
may be published later) but warned about, so a typo such as `artciles.read` is seen at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pb_headless.scopes import is_valid_scope, scope_covers


@dataclass(frozen=True, slots=True)
class ObjectScopes:
    """The three choices the form offers for one published object (its own scope names, maybe renamed)."""

    name: str
    read: str
    write: str

    @property
    def group(self) -> str | None:
        """`<group>.*` when read and write share a group (the usual `<name>.read` / `<name>.write`)."""
        read_group, _, _ = self.read.partition(".")
        write_group, _, _ = self.write.partition(".")
        return f"{read_group}.*" if read_group == write_group else None


@dataclass(frozen=True, slots=True)
class ScopeCheck:
    scopes: tuple[str, ...]  # the submitted scopes, deduplicated, in the order typed or ticked
    invalid: tuple[str, ...]  # malformed: every one, so they can be fixed in one go
    unreaching: tuple[str, ...]  # well formed but covering nothing published now


def split_scopes(*parts: str | Iterable[str]) -> tuple[str, ...]:
    """Ticked boxes and typed text (commas or spaces) as one ordered list without repeats."""
    items: list[str] = []
    for part in parts:
        texts = [part] if isinstance(part, str) else list(part)
        for text in texts:
            items += text.replace(",", " ").split()
    return tuple(dict.fromkeys(items))


def check_scopes(scopes: Iterable[str], required: Iterable[str]) -> ScopeCheck:
    """Every malformed scope and every scope that covers none of the `required` ones."""
    chosen = tuple(dict.fromkeys(scopes))
    needed = tuple(required)
    invalid = tuple(scope for scope in chosen if not is_valid_scope(scope))
    unreaching = tuple(
        scope
        for scope in chosen
        if scope not in invalid and not any(scope_covers(scope, need) for need in needed)
    )
    return ScopeCheck(chosen, invalid, unreaching)


def invalid_message(invalid: Iterable[str]) -> str:
    listed = tuple(invalid)
    names = ", ".join(f"'{scope}'" for scope in listed)
    plural = "these are not scopes" if len(listed) > 1 else "this is not a scope"
    return (
        f"{names}: {plural}. A scope is '*', '<group>.*' or '<group>.<action>', "
        "in lower-case letters, digits, '_' and '-'."
    )


def unreaching_message(unreaching: Iterable[str]) -> str:
    names = ", ".join(f"'{scope}'" for scope in unreaching)
    return (
        f"{names} reaches nothing published right now (no object or route asks for it). "
        "Check the spelling; it starts to work when something with that name is published."
    )
