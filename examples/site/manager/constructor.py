"""The table constructor: make a content table (title and fields), then add and edit its rows.

What a table publishes through the API is its API tab, served by pb_headless.admin at
/mgr/pb/tables/<name>/api.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from databases import Database
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from examples.site.definitions import create_content_table, find_table, load_tables
from examples.site.manager.signin import SignIn, redirect
from examples.site.records import INPUT_TYPES, form_text, row_id, values_from_form
from examples.site.rendering import Templates
from pb_headless.constructor import (
    FIELD_TYPES,
    ConstructorError,
    ConstructorField,
    ConstructorTable,
    table_for,
    transliterate,
)

BLANK_FIELD_ROWS = 6
RECORDS_SHOWN = 100
ROOT = "/mgr/constructor"


def fields_from_form(form: FormData) -> list[ConstructorField]:
    """The filled field rows of the new-table form (`field-<i>-name`, `-label`, `-type`, ...)."""
    fields = []
    for index in range(BLANK_FIELD_ROWS):

        def value(key: str, index: int = index) -> str:
            raw = form.get(f"field-{index}-{key}")
            return raw.strip() if isinstance(raw, str) else ""

        label, name = value("label"), value("name")
        if not label and not name:
            continue
        length = value("length")
        if length and not length.isdigit():
            raise ConstructorError(f"field '{name or label}': the length is a positive whole number")
        fields.append(
            ConstructorField(
                name=name or _name_from(label),
                type=value("type") or "string",
                required=bool(value("required")),
                searchable=bool(value("searchable")),
                length=int(length) if length else None,
                label=label or None,
            )
        )
    return fields


def _name_from(label: str) -> str:
    name = transliterate(label)
    return f"f_{name}" if name[:1].isdigit() else name


class ConstructorPages:
    def __init__(self, database: Database, signin: SignIn, templates: Templates) -> None:
        self.database = database
        self.signin = signin
        self.templates = templates

    def routes(self) -> list[Route]:
        page = self.signin.page
        return [
            Route(ROOT, page(self.index), methods=["GET"]),
            Route(f"{ROOT}/new", page(self.new_table), methods=["GET", "POST"]),
            Route(ROOT + "/{table}", page(self.table), methods=["GET"]),
            Route(ROOT + "/{table}/records/new", page(self.record), methods=["GET", "POST"]),
            Route(ROOT + "/{table}/records/{record}", page(self.record), methods=["GET", "POST"]),
            Route(ROOT + "/{table}/records/{record}/delete", page(self.delete_record), methods=["POST"]),
        ]

    async def index(self, request: Request) -> Response:
        return self.templates.page(request, "mgr/tables.html", {"tables": await load_tables(self.database)})

    async def new_table(self, request: Request) -> Response:
        form: Any = request.state.form if request.method == "POST" else {}
        error = None
        if request.method == "POST":
            try:
                table = await create_content_table(
                    self.database, str(form.get("title") or ""), fields_from_form(form)
                )
            except ConstructorError as refused:
                error = str(refused)
            else:
                return redirect(f"{ROOT}/{table.name}")
        return self.templates.page(
            request,
            "mgr/new_table.html",
            {
                "form": form,
                "error": error,
                "rows": range(BLANK_FIELD_ROWS),
                "types": FIELD_TYPES,
            },
            422 if error else 200,
        )

    async def table(self, request: Request) -> Response:
        table = await self._table(request)
        if table is None:
            return self._not_found(request)
        sql = table_for(table)
        rows = await self.database.fetch_all(sa.select(sql).order_by(sql.c.id.desc()).limit(RECORDS_SHOWN))
        return self.templates.page(
            request,
            "mgr/table.html",
            {"table": table, "records": [dict(row._mapping) for row in rows], "form_text": form_text},
        )

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
                return redirect(f"{ROOT}/{table.name}")
        shown = {field.name: form_text(field, values.get(field.name)) for field in table.fields}
        return self.templates.page(
            request,
            "mgr/record.html",
            {
                "table": table,
                "record_id": record_id,
                "values": shown,
                "published": bool(values.get("published")),
                "errors": errors,
                "input_types": INPUT_TYPES,
            },
            422 if errors else 200,
        )

    async def delete_record(self, request: Request) -> Response:
        table, record_id = await self._table(request), row_id(request.path_params["record"])
        if table is None or record_id is None:
            return self._not_found(request)
        sql = table_for(table)
        await self.database.execute(sql.delete().where(sql.c.id == record_id))
        return redirect(f"{ROOT}/{table.name}")

    async def _save(self, sql: sa.Table, record_id: int | None, values: dict[str, Any]) -> None:
        if record_id is None:
            await self.database.execute(sql.insert().values(**values))
        else:
            await self.database.execute(sql.update().where(sql.c.id == record_id).values(**values))

    async def _table(self, request: Request) -> ConstructorTable | None:
        return await find_table(self.database, request.path_params["table"])

    def _not_found(self, request: Request) -> Response:
        return self.templates.page(request, "mgr/not_found.html", status_code=404)
