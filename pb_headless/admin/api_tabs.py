"""The API tab of each constructor table: the switch, the ticked fields, filter and sort per field,
the operations and the URL name.

The table definitions come from the host's loader (the one it gives `ConstructorSource`); the tab
is saved through `ApiTabStore`, which moves the shared version, so the API serves the change on the
next request of every instance. A refused save shows the form as it was submitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pb_headless.admin.access import form_of, text
from pb_headless.admin.reach import object_reach
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer, flash
from pb_headless.admin.sources import source_of
from pb_headless.constructor import (
    ApiTab,
    ApiTabStore,
    ConstructorError,
    ConstructorSource,
    ConstructorTable,
    declaration_for,
    url_name_for,
)
from pb_headless.constructor.publishing import default_sortable
from pb_headless.constructor.source import TableLoader
from pb_headless.operations import Operation
from pb_headless.registry import OPERATIONS

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

PRIMARY_KEY = "id"


@dataclass(frozen=True)
class TabForm:
    """The tab as the page shows it: stored values, or exactly what was submitted."""

    enabled: bool
    fields: tuple[str, ...]
    operations: tuple[str, ...]
    url_name: str
    filterable: tuple[str, ...]
    sortable: tuple[str, ...]

    @classmethod
    def of(cls, table: ConstructorTable, tab: ApiTab) -> TabForm:
        names = tuple(field.name for field in table.fields)
        return cls(
            tab.enabled,
            tab.fields,
            tab.operations,
            tab.url_name or "",
            names if tab.filterable is None else tab.filterable,
            default_sortable(table) if tab.sortable is None else tab.sortable,
        )

    @classmethod
    def submitted(cls, form: FormData, table: ConstructorTable) -> TabForm:
        defined = {field.name for field in table.fields}

        def ticked(key: str) -> tuple[str, ...]:
            return tuple(name for name in form.getlist(key) if isinstance(name, str) and name in defined)

        operations = tuple(op for op in form.getlist("operations") if op in OPERATIONS)
        return cls(bool(text(form, "enabled")), ticked("fields"), operations, text(form, "url_name"),
                   ticked("filterable"), ticked("sortable"))  # fmt: skip

    def tab(self) -> ApiTab:
        if not self.operations:
            raise ConstructorError("keep at least one operation (list and show are the read-only ones)")
        return ApiTab(
            enabled=self.enabled,
            fields=self.fields,
            operations=self.operations,
            url_name=self.url_name or None,
            filterable=(PRIMARY_KEY, *self.filterable),
            sortable=(PRIMARY_KEY, *self.sortable),
        )


def publication(table: ConstructorTable, tab: ApiTab, catalog: Any) -> dict[str, Any]:
    """What the tab amounts to, in words the page shows: published under which name, or why not."""
    name = tab.url_name or url_name_for(table)
    if not tab.enabled:
        return {"published": False, "name": name, "reason": "the switch is off"}
    if declaration_for(table, tab) is None:
        return {"published": False, "name": name, "reason": "no field is ticked"}
    taken = name_taken_by(table, name, catalog)
    if taken:
        return {"published": False, "name": name, "reason": f"the name is taken by {taken}"}
    if name not in catalog:
        return {
            "published": False,
            "name": name,
            "reason": "it could not be published; the server log says why",
        }
    return {"published": True, "name": name, "reason": None}


def name_taken_by(table: ConstructorTable, name: str, catalog: Any) -> str | None:
    """Which other object publishes `name` (its kind and name, never a server path), or None."""
    spec = catalog.get(name)
    if spec is None:
        return None
    source = source_of(spec)
    if source.kind == "constructor" and source.name == table.name:
        return None
    return source.describe()


class ApiTabSection:
    """Pages under `/tables`: the list of constructor tables and the API tab of each."""

    def __init__(self, api: HeadlessAPI, renderer: Renderer, load_tables: TableLoader) -> None:
        self.api = api
        self.renderer = renderer
        self.source = ConstructorSource(load_tables)
        self.store = ApiTabStore(api.database)

    def routes(self, guard: Callable[[Any], Any]) -> list[Route]:
        return [
            Route("/tables", guard(self.index), methods=["GET"]),
            Route("/tables/{table}/api", guard(self.tab), methods=["GET", "POST"]),
        ]

    async def index(self, request: Request) -> Response:
        tables = await self.source.tables(self.api.database)
        tabs = await self.store.all()
        catalog = (await self.api.snapshot()).catalog
        rows = [(table, publication(table, tabs.get(table.name, ApiTab()), catalog)) for table in tables]
        return self.renderer.page(request, "tables.html", {"rows": rows, "api_prefix": self.api.prefix})

    async def tab(self, request: Request) -> Response:
        name = request.path_params["table"]
        table = next((t for t in await self.source.tables(self.api.database) if t.name == name), None)
        if table is None:
            return self.renderer.error(request, 404, "Not found", f"There is no constructor table '{name}'.")
        stored = await self.store.get(name)
        shown, error = TabForm.of(table, stored), None
        catalog = (await self.api.snapshot()).catalog
        if request.method == "POST":
            shown = TabForm.submitted(form_of(request), table)
            try:
                tab = shown.tab()
                self._check_name(table, tab, catalog)
                await self.store.save(name, tab)
            except ConstructorError as refused:
                error = _sentence(refused)
            else:
                flash(request, _saved_message(table, tab))
                return RedirectResponse(request.url.path, status_code=303, headers=PAGE_HEADERS)
        state = publication(table, stored, catalog)
        context = {
            "table": table,
            "tab": shown,
            "error": error,
            "operations": OPERATIONS,
            "default_name": url_name_for(table),
            "api_prefix": self.api.prefix,
            "state": state,
            "reach": await self._reach(catalog, state),
        }
        return self.renderer.page(request, "api_tab.html", context, 422 if error else 200)

    async def _reach(self, catalog: Any, state: dict[str, Any]) -> dict[str, Any] | None:
        """The tokens that reach the published object and those that get 404 (reach.py says why)."""
        spec = catalog.get(state["name"]) if state["published"] else None
        if spec is None:
            return None
        tokens = await self.api.tokens.list()
        reaches = object_reach(spec, tokens)
        now = datetime.now(UTC)
        writes = [
            op.value for op in (Operation.CREATE, Operation.UPDATE, Operation.DELETE) if op in spec.operations
        ]
        return {
            "reaching": [reach for reach in reaches if reach.reaches],
            "missing": [reach.token for reach in reaches if not reach.reaches],
            "read_scope": spec.read_scope,
            # Writes also go through POST /batch, several at once, all or none (docs/writes.md).
            "batch": writes,
            "batch_writers": [reach.token for reach in reaches if reach.writes] if writes else [],
            # A disabled or expired token gets 401 whatever its scopes: the card says so next to it.
            "states": {token.name: token.state(now) for token in tokens},
        }

    @staticmethod
    def _check_name(table: ConstructorTable, tab: ApiTab, catalog: Any) -> None:
        """Refuse a URL name another object already answers to, before anything is saved."""
        if not tab.enabled:
            return  # with the switch off nothing is published, so the name takes nothing from anyone
        name = tab.url_name or url_name_for(table)
        taken = name_taken_by(table, name, catalog)
        if taken:
            raise ConstructorError(
                f"the URL name “{name}” is already used by {taken}. "
                "Choose another URL name; nothing was saved"
            )


def _saved_message(table: ConstructorTable, tab: ApiTab) -> str:
    title = table.title or table.name
    if declaration_for(table, tab) is None:
        return f"API tab of “{title}” saved. The table is not published."
    return f"API tab of “{title}” saved. It is served at /objects/{tab.url_name or url_name_for(table)}."


def _sentence(error: Exception) -> str:
    message = str(error).strip()
    message = message[:1].upper() + message[1:]
    return message if message.endswith((".", "!", "?")) else message + "."
