"""The registration event and the satellite components that subscribe to it."""

from __future__ import annotations

import importlib
import inspect
from collections import defaultdict
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from typing import Any

OnServiceApiRegister = "OnServiceApiRegister"
COMPONENT_GROUP = "pb_headless.components"

Handler = Callable[..., Any]


class ComponentError(RuntimeError):
    """A satellite component could not be loaded; the message names it."""


class Events:
    """Named events with handlers; `fire` awaits handlers that are coroutines."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = defaultdict(list)

    def on(self, name: str, handler: Handler) -> Handler:
        if handler not in self._handlers[name]:
            self._handlers[name].append(handler)
        return handler

    def off(self, name: str, handler: Handler) -> None:
        if handler in self._handlers[name]:
            self._handlers[name].remove(handler)

    async def fire(self, name: str, *args: Any) -> None:
        for handler in list(self._handlers[name]):
            result = handler(*args)
            if inspect.isawaitable(result):
                await result


def load_components(events: Events, modules: Iterable[str] = ()) -> list[str]:
    """Call `setup(events)` of every component: the entry-point group, then the named modules."""
    loaded: list[str] = []
    for entry in entry_points(group=COMPONENT_GROUP):
        _setup(entry.name, lambda entry=entry: entry.load(), events)
        loaded.append(entry.name)
    for module_name in (name.strip() for name in modules if name.strip()):
        def load(module_name: str = module_name) -> Any:
            return getattr(importlib.import_module(module_name), "setup")
        _setup(module_name, load, events)
        loaded.append(module_name)
    return loaded


def _setup(name: str, load: Callable[[], Any], events: Events) -> None:
    try:
        setup = load()
    except Exception as error:
        raise ComponentError(f"component '{name}': cannot load its setup(events): {error}") from error
    if not callable(setup):
        raise ComponentError(f"component '{name}': setup is not callable")
    setup(events)
