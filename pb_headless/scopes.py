"""Scope strings: what they may look like and which required scope a granted one covers."""

from __future__ import annotations

import re
from collections.abc import Iterable

SCOPE_PATTERN = re.compile(r"\*|[a-z0-9_-]+\.(\*|[a-z0-9_-]+)")


def is_valid_scope(scope: str) -> bool:
    """`*`, `<group>.*` or `<group>.<action>`, each part of `[a-z0-9_-]`."""
    return SCOPE_PATTERN.fullmatch(scope) is not None


def scope_covers(granted: str, required: str) -> bool:
    """Whether one granted scope covers the required one (exact, `group.*`, or `*`)."""
    if granted == "*" or granted == required:
        return True
    if granted.endswith(".*"):
        group = granted[:-1]  # keep the dot: `articles.*` must not cover `articles2.read`
        return required.startswith(group) and "." not in required[len(group) :]
    return False


def has_required_scope(granted: Iterable[str], required: str) -> bool:
    """Whether any of a token's scopes covers `required`. Matching is exact and case-sensitive."""
    return any(scope_covers(scope, required) for scope in granted)
