"""The API tab of each constructor table: the switch, the ticked fields, the operations and the URL name.

The table definitions come from the host's loader (the one it gives `ConstructorSource`); the tab
is saved through `ApiTabStore`, which moves the shared version, so the API serves the change on the
next request of every instance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pb_headless.admin.access import form_of, text
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer, flash
from pb_headless.constructor import (
    ApiTab,
    ApiTabStore,
    ConstructorError,
    ConstructorSource,
    ConstructorTable,
    declaration_for,
    url_name_for,
)
from pb_headless.constructor.source import TableLoader
from pb_headless.registry import OPERATIONS, Source

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI


def publication(table: ConstructorTable, tab: ApiTab, catalog: Any) -> dict[str, Any]:
    """What the tab amounts to, in words the page shows: published under which name, or why not."""
    name = tab.url_name or url_name_for(table)
    if not tab.enabled:
        return {"published": False, "name": name, "reason": "the switch is off"}
    if declaration_for(table, tab) is None:
        return {"published": False, "name": name, "reason": "no field is ticked"}
    spec = catalog.get(name)
    if spec is not None and spec.source != Source.constructor(table.name):
        return {"published": False, "name": name, "reason": f"the name is taken by {spec.source}"}
    if spec is None:
        return {
            "published": False,
            "name": name,
            "reason": "it could not be published; the server log says why",
        }
    return {"published": True, "name": name, "reason": None}


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
        tab, error = await self.store.get(name), None
        if request.method == "POST":
            try:
                tab = self._tab_from_form(request, table, tab)
                await self.store.save(name, tab)
            except ConstructorError as refused:
                error = str(refused)
            else:
                flash(request, f"API tab of '{table.title or table.name}' saved.")
                return RedirectResponse(request.url.path, status_code=303, headers=PAGE_HEADERS)
        return self.renderer.page(
            request,
            "api_tab.html",
            {
                "table": table,
                "tab": tab,
                "error": error,
                "operations": OPERATIONS,
                "default_name": url_name_for(table),
                "api_prefix": self.api.prefix,
                "state": publication(table, tab, (await self.api.snapshot()).catalog),
            },
            422 if error else 200,
        )

    @staticmethod
    def _tab_from_form(request: Request, table: ConstructorTable, stored: ApiTab) -> ApiTab:
        """The submitted tab; the lists this page does not edit keep their stored values."""
        form = form_of(request)
        defined = {field.name for field in table.fields}
        ticked = [name for name in form.getlist("fields") if isinstance(name, str) and name in defined]
        operations = [op for op in form.getlist("operations") if op in OPERATIONS]
        if not operations:
            raise ConstructorError("operations: keep at least one operation (list and show are read-only)")
        return ApiTab(
            enabled=bool(text(form, "enabled")),
            fields=tuple(ticked),
            operations=tuple(operations),
            url_name=text(form, "url_name") or None,
            writable=stored.writable,
            filterable=stored.filterable,
            sortable=stored.sortable,
        )
