"""Declarations about writes that could never work stop the start, naming the object (docs/declarations.md
"When declarations are checked"); the source of every error is typed; a declaration is checked once.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry, DeclarationError
from pb_headless.registry import Source, SourceKind
from pb_headless.registry import declaration as declaration_module

metadata = sa.MetaData()
orders = sa.Table(
    "wd_orders",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(100), nullable=False),
    sa.Column("reference", sa.String(20), nullable=False),  # no default of any kind
    sa.Column("status", sa.String(20), nullable=False, default="new"),
    sa.Column("note", sa.Text, nullable=True),
    sa.Column("published", sa.Boolean, nullable=False),  # the API fills it on create
)
BASE = {"model": orders, "fields": ["title", "reference"]}


@pytest.mark.parametrize("key", ["writable", "rules"])
@pytest.mark.parametrize("operations", [None, ["list", "show"], ["show"]])
def test_writable_or_rules_on_an_object_without_write_operations_fail_naming_the_object(key, operations):
    declaration = {**BASE, key: ["title"] if key == "writable" else {"title": "required"}}
    if operations is not None:
        declaration["operations"] = operations
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().register("orders", declaration)
    assert str(caught.value).startswith(
        f"code: object 'orders', key '{key}': '{key}' is given but the object allows no write operation"
    )
    assert (caught.value.object_name, caught.value.key) == ("orders", key)


@pytest.mark.parametrize("operations", [["create"], ["update"], ["delete"], ["list", "create", "update"]])
def test_writable_and_rules_are_fine_with_any_write_operation(operations):
    ApiRegistry().register(
        "orders",
        {
            **BASE,
            "operations": operations,
            "writable": ["title", "reference"],
            "rules": {"title": "required"},
        },
    )


def test_a_not_null_column_without_default_that_no_create_can_fill_fails_naming_object_and_column():
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().register("orders", {**BASE, "operations": ["list", "create"], "writable": ["title"]})
    assert str(caught.value) == (
        "code: object 'orders', key 'writable': column 'reference' is NOT NULL and has no default, so no "
        "create could fill it: make it writable, or give it a default in the model or the table"
    )


@pytest.mark.parametrize(
    "declaration",
    [
        {**BASE, "operations": ["list", "update"], "writable": ["title"]},  # no create
        {**BASE, "operations": ["create"], "writable": ["title", "reference"]},  # the client fills it
        {**BASE},  # read-only
    ],
)
def test_a_not_null_column_is_fine_when_no_create_needs_it_or_the_client_fills_it(declaration):
    ApiRegistry().register("orders", declaration)


async def test_a_reflected_table_with_an_unfillable_column_fails_when_the_api_starts(
    sqlite_database, host_factory, site_folder
):
    await sqlite_database.execute(
        "CREATE TABLE wd_reflected (id INTEGER PRIMARY KEY, title VARCHAR(50) "
        "NOT NULL, code VARCHAR(10) NOT NULL)"
    )
    path = site_folder.write_api(
        'API = {"things": {"table": "wd_reflected", "fields": ["title"], '
        '"operations": ["create"], "writable": ["title"]}}\n'
    )
    host = await host_factory(sqlite_database, ApiRegistry().load_file(path))
    with pytest.raises(DeclarationError) as caught:
        await host.api.startup()
    assert str(caught.value).startswith(f"{path}: object 'things', key 'writable': column 'code' is NOT NULL")
    assert caught.value.source == Source(SourceKind.FILE, str(path))


def test_the_source_of_an_error_is_typed_and_reads_as_before(site_folder):
    path = site_folder.write_api('API = {"orders": {"model": "nowhere:orders", "fields": ["title"]}}\n')
    with pytest.raises(DeclarationError) as from_file:
        ApiRegistry().load_file(path)
    assert from_file.value.source.kind is SourceKind.FILE and str(from_file.value.source) == str(path)
    with pytest.raises(DeclarationError) as from_code:
        ApiRegistry().register("orders", {**BASE, "sortable": ["note"]})
    assert from_code.value.source == Source.code() and str(from_code.value).startswith("code: ")
    with pytest.raises(DeclarationError) as labelled:
        ApiRegistry().register("orders", {**BASE, "sortable": ["note"]}, source=Source.component("shop"))
    assert str(labelled.value).startswith("component 'shop': object 'orders', key 'sortable': ")
    assert not labelled.value.source.is_constructor and Source.constructor("news").is_constructor
    assert str(Source.constructor("news")) == "constructor:news"


async def test_a_model_declaration_is_checked_once_from_registration_to_serving(
    sqlite_database, host_factory, monkeypatch
):
    compiled = []
    original = declaration_module.compile_rules
    monkeypatch.setattr(
        declaration_module, "compile_rules", lambda *args: compiled.append(args[0]) or original(*args)
    )
    registry = ApiRegistry()
    registry.register("orders", {**BASE, "operations": ["create"], "writable": ["title", "reference"]})
    host = await host_factory(sqlite_database, registry)
    await host.api.startup()
    assert compiled == ["orders"]
