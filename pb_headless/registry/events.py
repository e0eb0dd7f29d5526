"""The registration event and the satellite components that subscribe to it.

A satellite package declares an entry point in the group `pb_headless.components` (or is named by
module) whose `setup(events)` subscribes: `events.on("OnServiceApiRegister", handler)`. The handler
receives the registry each time it is (re)built and calls `registry.register(name, declaration)`.
"""

from __future__ import annotations

import importlib
import inspect
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import partial
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

from pb_headless.registry.declaration import DeclarationError
from pb_headless.registry.source import Source

OnServiceApiRegister = "OnServiceApiRegister"
COMPONENT_GROUP = "pb_headless.components"

Handler = Callable[..., Any]

Running = Callable[[str | None], object]  # told whose handler runs next (None: the code's own)


class ComponentError(DeclarationError):
    """A satellite component could not be loaded, or its handler failed; the message names it first."""

    def __init__(self, component: str, problem: str, cause: Exception | None = None) -> None:
        # Not DeclarationError's form: the component comes first even when an object is known.
        ValueError.__init__(self, f"component '{component}': {problem}")
        self.source, self.problem = Source.component(component), problem
        self.object_name = getattr(cause, "object_name", "*")
        self.key = getattr(cause, "key", None)


class Events:
    """Named events with handlers; `fire` awaits handlers that are coroutines.

    A handler subscribed while a component's `setup` runs belongs to that component, so a failure
    in it names the component.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = defaultdict(list)
        self._owners: dict[int, str] = {}
        self._setting_up: str | None = None

    def on(self, name: str, handler: Handler) -> Handler:
        if not callable(handler):
            raise TypeError(f"events.on({name!r}, ...): the handler must be callable")
        if handler not in self._handlers[name]:
            self._handlers[name].append(handler)
            if self._setting_up is not None:
                self._owners[id(handler)] = self._setting_up
        return handler

    def off(self, name: str, handler: Handler) -> None:
        if handler in self._handlers[name]:
            self._handlers[name].remove(handler)
            self._owners.pop(id(handler), None)

    def handlers(self, name: str) -> tuple[Handler, ...]:
        return tuple(self._handlers[name])

    async def fire(self, name: str, *args: Any, running: Running | None = None) -> None:
        """Call every handler of `name` in turn; `running`, if given, is told the component each
        handler belongs to before it runs, and None when all have run."""
        for handler in list(self._handlers[name]):
            owner = self._owners.get(id(handler))
            if running is not None:
                running(owner)
            try:
                result = handler(*args)
                if inspect.isawaitable(result):
                    await result
            except DeclarationError as error:
                if owner is None or error.source == Source.component(owner):
                    raise
                raise ComponentError(owner, f"its {name} handler failed: {error}", error) from error
            except Exception as error:
                if owner is None:
                    raise
                raise ComponentError(
                    owner, f"its {name} handler failed: {type(error).__name__}: {error}", error
                ) from error
            finally:
                if running is not None:
                    running(None)

    def setting_up(self, component: str | None) -> None:
        """Mark the handlers subscribed from now on as the named component's (None ends it)."""
        self._setting_up = component


def load_components(events: Events, modules: Iterable[str] = ()) -> list[str]:
    """Call `setup(events)` of every component: the entry-point group, then the named modules."""
    loaded: list[str] = []
    for entry in entry_points(group=COMPONENT_GROUP):
        _setup(f"{entry.name} ({entry.value})", partial(_entry_setup, entry), events)
        loaded.append(entry.name)
    for module_name in (name.strip() for name in modules if name.strip()):

        def load(module_name: str = module_name) -> Any:
            return _setup_of(importlib.import_module(module_name))

        _setup(module_name, load, events)
        loaded.append(module_name)
    return loaded


def _entry_setup(entry: EntryPoint) -> Any:
    target = entry.load()
    return _setup_of(target) if isinstance(target, ModuleType) else target


def _setup_of(module: ModuleType) -> Any:
    setup = getattr(module, "setup", None)
    if setup is None:
        raise AttributeError(f"module '{module.__name__}' defines no setup(events)")
    return setup


def _setup(name: str, load: Callable[[], Any], events: Events) -> None:
    try:
        setup = load()
    except Exception as error:
        raise ComponentError(
            name, f"cannot load its setup(events): {type(error).__name__}: {error}", error
        ) from error
    if not callable(setup):
        raise ComponentError(name, "setup is not callable")
    events.setting_up(name)
    try:
        setup(events)
    except Exception as error:
        raise ComponentError(
            name, f"its setup(events) failed: {type(error).__name__}: {error}", error
        ) from error
    finally:
        events.setting_up(None)
