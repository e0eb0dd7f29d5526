"""The table constructor: make, edit and delete content tables, then add and edit their rows.

What a table publishes through the API is its API tab, served by pb_headless.admin at
/mgr/pb/tables/<name>/api. Changes that take something away (removing fields, deleting the table)
are confirmed on a page that first says what happens to the records and to the published API.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from databases import Database
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from examples.site.definitions import (
    count_rows,
    create_content_table,
    delete_content_table,
    find_table,
    load_tables,
    update_content_table,
)
from examples.site.manager.signin import SignIn, redirect
from examples.site.manager.table_forms import row_indexes, sentence, table_form
from examples.site.records import INPUT_TYPES, display_text, form_text, row_id, values_from_form
from examples.site.rendering import Templates, flash
from pb_headless import HeadlessAPI
from pb_headless.admin.sources import source_of
from pb_headless.constructor import (
    FIELD_TYPES,
    ApiTabStore,
    ConstructorError,
    ConstructorTable,
    table_for,
    url_name_for,
)

BLANK_FIELD_ROWS = 3
RECORDS_SHOWN = 100
ROOT = "/mgr/constructor"


class ConstructorPages:
    def __init__(self, api: HeadlessAPI, signin: SignIn, templates: Templates) -> None:
        self.api = api
        self.database: Database = api.database
        self.signin = signin
        self.templates = templates

    def routes(self) -> list[Route]:
        page = self.signin.page
        return [
            Route(ROOT, page(self.index), methods=["GET"]),
            Route(f"{ROOT}/new", page(self.new_table), methods=["GET", "POST"]),
            Route(ROOT + "/{table}", page(self.table), methods=["GET"]),
            Route(ROOT + "/{table}/edit", page(self.edit_table), methods=["GET", "POST"]),
            Route(ROOT + "/{table}/delete", page(self.delete_table), methods=["GET", "POST"]),
            Route(ROOT + "/{table}/records/new", page(self.record), methods=["GET", "POST"]),
            Route(ROOT + "/{table}/records/{record}", page(self.record), methods=["GET", "POST"]),
            Route(ROOT + "/{table}/records/{record}/delete", page(self.delete_record), methods=["POST"]),
        ]

    async def index(self, request: Request) -> Response:
        tables = await load_tables(self.database)
        published = {table.name: await self.published_as(table) for table in tables}
        context = {"tables": tables, "published": published, "api_prefix": self.api.prefix}
        return self.templates.page(request, "mgr/tables.html", context)

    async def new_table(self, request: Request) -> Response:
        form: Any = request.state.form if request.method == "POST" else {}
        error = None
        if request.method == "POST":
            try:
                submitted = table_form(form)
                table = await create_content_table(self.database, submitted.title, submitted.added)
            except ConstructorError as refused:
                error = sentence(refused)
            else:
                flash(request, f"Table “{table.title}” created. Add records, then publish it on its API tab.")
                return redirect(f"{ROOT}/{table.name}")
        return self._table_form(request, None, form, error)

    async def edit_table(self, request: Request) -> Response:
        table = await self._table(request)
        if table is None:
            return self._not_found(request)
        form: Any = request.state.form if request.method == "POST" else _form_of(table)
        error, confirm = None, None
        if request.method == "POST":
            try:
                submitted = table_form(form, table)
                if submitted.removed and not form.get("confirmed"):
                    confirm = await self._removal_consequences(table, submitted.removed)
                else:
                    changed = await update_content_table(
                        self.database, table, submitted.title, submitted.kept, submitted.added
                    )
                    await self._keep_address(table, changed)
                    flash(request, _edit_message(changed, submitted.added, submitted.removed))
                    return redirect(f"{ROOT}/{table.name}")
            except ConstructorError as refused:
                error = sentence(refused)
        return self._table_form(request, table, form, error, confirm)

    async def delete_table(self, request: Request) -> Response:
        table = await self._table(request)
        if table is None:
            return self._not_found(request)
        if request.method == "POST":
            await delete_content_table(self.database, table)
            flash(request, f"Table “{table.title}” deleted, with its records and its API tab.")
            return redirect(ROOT)
        context = {
            "table": table,
            "records": await count_rows(self.database, table),
            "object": await self.published_as(table),
            "api_prefix": self.api.prefix,
        }
        return self.templates.page(request, "mgr/delete_table.html", context)

    async def table(self, request: Request) -> Response:
        table = await self._table(request)
        if table is None:
            return self._not_found(request)
        sql = table_for(table)
        rows = await self.database.fetch_all(sa.select(sql).order_by(sql.c.id.desc()).limit(RECORDS_SHOWN))
        context = {
            "table": table,
            "records": [dict(row._mapping) for row in rows],
            "display_text": display_text,
            "object": await self.published_as(table),
            "api_prefix": self.api.prefix,
        }
        return self.templates.page(request, "mgr/table.html", context)

    async def record(self, request: Request) -> Response:
        table = await self._table(request)
        if table is None:
            return self._not_found(request)
        sql, record_id, stored = table_for(table), None, None
        if "record" in request.path_params:
            record_id = row_id(request.path_params["record"])
            if record_id is not None:
                stored = await self.database.fetch_one(sa.select(sql).where(sql.c.id == record_id))
            if stored is None:
                return self._not_found(request)
        values: dict[str, Any] = dict(stored._mapping) if stored is not None else {"published": True}
        errors: dict[str, str] = {}
        if request.method == "POST":
            values, errors = values_from_form(table, request.state.form)
            if not errors:
                await self._save(sql, record_id, values)
                flash(request, "Record saved." if record_id else "Record added.")
                return redirect(f"{ROOT}/{table.name}")
        context = {
            "table": table,
            "record_id": record_id,
            "values": _shown_values(table, values, request.state.form if errors else None),
            "checked": {field.name: values.get(field.name) is True for field in table.fields},
            "published": bool(values.get("published")),
            "errors": errors,
            "input_types": INPUT_TYPES,
        }
        return self.templates.page(request, "mgr/record.html", context, 422 if errors else 200)

    async def delete_record(self, request: Request) -> Response:
        table, record_id = await self._table(request), row_id(request.path_params["record"])
        if table is None or record_id is None:
            return self._not_found(request)
        sql = table_for(table)
        await self.database.execute(sql.delete().where(sql.c.id == record_id))
        flash(request, f"Record {record_id} deleted.")
        return redirect(f"{ROOT}/{table.name}")

    async def published_as(self, table: ConstructorTable) -> str | None:
        """The API object this table is published as right now, or None."""
        catalog = (await self.api.snapshot()).catalog
        for name, spec in catalog.items():
            source = source_of(spec)
            if source.kind == "constructor" and source.name == table.name:
                return name
        return None

    async def _keep_address(self, before: ConstructorTable, after: ConstructorTable) -> None:
        """A new title would move a published table's default API address; pin the old one instead,
        so clients keep working (the API tab can still change it on purpose)."""
        store = ApiTabStore(self.database)
        tab = await store.get(before.name)
        if tab.url_name is None and url_name_for(before) != url_name_for(after):
            await store.save(before.name, replace(tab, url_name=url_name_for(before)))

    async def _removal_consequences(self, table: ConstructorTable, removed: Any) -> dict[str, Any]:
        return {
            "fields": removed,
            "records": await count_rows(self.database, table),
            "object": await self.published_as(table),
        }

    def _table_form(
        self,
        request: Request,
        table: ConstructorTable | None,
        form: Any,
        error: str | None,
        confirm: dict[str, Any] | None = None,
    ) -> Response:
        indexes = row_indexes(form) or list(range(BLANK_FIELD_ROWS if table is None else 0))
        context = {
            "table": table,
            "form": form,
            "error": error,
            "confirm": confirm,
            "rows": indexes,
            "next_row": (max(indexes) + 1) if indexes else 0,
            "types": FIELD_TYPES,
            "api_prefix": self.api.prefix,
        }
        status = 422 if error else 200
        return self.templates.page(request, "mgr/table_form.html", context, status)

    async def _save(self, sql: sa.Table, record_id: int | None, values: dict[str, Any]) -> None:
        if record_id is None:
            await self.database.execute(sql.insert().values(**values))
        else:
            await self.database.execute(sql.update().where(sql.c.id == record_id).values(**values))

    async def _table(self, request: Request) -> ConstructorTable | None:
        return await find_table(self.database, request.path_params["table"])

    def _not_found(self, request: Request) -> Response:
        return self.templates.page(request, "mgr/not_found.html", status_code=404)


def _shown_values(table: ConstructorTable, values: dict[str, Any], refused: Any) -> dict[str, str]:
    """What the record form shows: the stored values, or after a refusal exactly what was typed."""
    if refused is not None:
        return {field.name: str(refused.get(field.name) or "") for field in table.fields}
    return {field.name: form_text(field, values.get(field.name)) for field in table.fields}


def _form_of(table: ConstructorTable) -> dict[str, Any]:
    """The edit form's starting values: the table as stored."""
    form: dict[str, Any] = {"title": table.title}
    for field in table.fields:
        form[f"existing-{field.name}-label"] = field.label or ""
        form[f"existing-{field.name}-searchable"] = "1" if field.searchable else ""
    return form


def _edit_message(table: ConstructorTable, added: Any, removed: Any) -> str:
    parts = [f"Table “{table.title}” saved."]
    if added:
        names = ", ".join(f"“{field.label or field.name}”" for field in added)
        parts.append(f"Added {names}: tick them on the API tab to publish them.")
    if removed:
        names = ", ".join(f"“{field.label or field.name}”" for field in removed)
        parts.append(f"Removed {names}.")
    return " ".join(parts)
