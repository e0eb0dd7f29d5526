"""What `pip install 'pb_headless[site]'` (scripts/site, the README's first command) brings."""

from __future__ import annotations

import re
import tomllib

from tests.support.server import REPOSITORY


def _requirements(extra: str, extras: dict[str, list[str]]) -> set[str]:
    """The distributions an extra installs, following `pb_headless[...]` inside it."""
    names: set[str] = set()
    for requirement in extras[extra]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement)
        assert name is not None
        inner = re.search(r"\[([^]]+)\]", requirement)
        if name.group(0) == "pb_headless" and inner:
            for item in inner.group(1).split(","):
                names |= _requirements(item.strip(), extras)
        else:
            names.add(name.group(0).lower())
    return names


def test_the_site_extra_brings_the_webhook_sender_so_the_first_site_can_deliver():
    extras = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert _requirements("webhooks", extras) <= _requirements("site", extras)
    assert "httpcore" in _requirements("site", extras)
