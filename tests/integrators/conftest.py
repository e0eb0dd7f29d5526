"""Fixtures for integrators' tests: the demo site served with custom routes, and the example site folder."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integrators.example_site import SITE, site_module_names
from tests.support.demo import create_demo, demo_registry


@pytest.fixture
def routed_host(host_factory):
    """`await routed_host(database, routes, **options)`: the demo site, its rows, and these custom routes."""

    async def make(database, routes, **options):
        await create_demo(database)
        return await host_factory(database, demo_registry(), routes=routes, **options)

    return make


@pytest.fixture
def site_folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """examples/integrators on sys.path, as a site folder is: `core.App.models` imports from it.

    Other site folders (examples/site) have a `core` package too, so the modules are forgotten
    before and after, and whatever was imported before comes back afterwards.
    """
    for name in site_module_names():
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(SITE))
    yield SITE
    for name in site_module_names():
        del sys.modules[name]
