"""A declaration as written (docs/declarations.md), checked when it is registered.

`check_declaration` turns the raw mapping into a frozen `Declaration`, failing with one message that
names the source, the object and the key. Checks that need the table's columns run when the table
is known: at once for a `model`, at build time for a reflected `table`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa

from pb_headless.fields import describe_column
from pb_headless.operations import READ_OPERATIONS, WRITE_OPERATIONS, Operation
from pb_headless.registry.source import Source
from pb_headless.rules import RuleError, Validator, compile_rules
from pb_headless.scopes import is_valid_scope

OPERATIONS = tuple(Operation)
DECLARATION_KEYS = frozenset(
    {
        "model",
        "table",
        "fields",
        "filterable",
        "searchable",
        "sortable",
        "with",
        "per_page",
        "max_per_page",
        "default_sort",
        "query",
        "operations",
        "writable",
        "rules",
        "scopes",
    }
)
DEFAULT_PER_PAGE = 20
DEFAULT_MAX_PER_PAGE = 100
OBJECT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,99}")
PUBLISHED_COLUMN = "published"  # a boolean column of this name narrows the served rows
PATH_SEPARATOR = "."  # `author.name` in `filterable`: a field of a related record


class DeclarationError(ValueError):
    """A declaration cannot be served; the message names the source, the object and the key.

    One line a site owner acts on: `<source>: object '<name>', key '<key>': <problem>`. `source` is a
    `Source` (text given instead is a label, shown as written); `name` "*" stands for no object in
    particular (the file itself could not be read).
    """

    def __init__(self, source: Source | str, name: str, key: str | None, problem: str) -> None:
        self.source, self.object_name, self.key, self.problem = Source.of(source), name, key, problem
        where = str(self.source) if name == "*" else f"{self.source}: object '{name}'"
        where += f", key '{key}'" if key else ""
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class RelationDeclaration:
    name: str
    fields: tuple[str, ...] | None  # None: the published fields of the object publishing the model


@dataclass(frozen=True)
class Declaration:
    """One object's declaration, every key checked and normalised."""

    name: str
    source: Source
    table: sa.Table | None
    table_name: str | None
    fields: tuple[str, ...]
    filterable: tuple[str, ...] = ()
    searchable: tuple[str, ...] = ()
    sortable: tuple[str, ...] = ()
    relations: tuple[RelationDeclaration, ...] = ()
    per_page: int = DEFAULT_PER_PAGE
    max_per_page: int = DEFAULT_MAX_PER_PAGE
    default_sort: tuple[tuple[str, bool], ...] = ()
    query: Callable[[sa.Select[Any]], sa.Select[Any]] | None = None
    operations: frozenset[Operation] = READ_OPERATIONS
    writable: tuple[str, ...] = ()
    rules: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    read_scope: str = ""
    write_scope: str = ""
    model: Any = None
    validator: Validator | None = None  # compiled with the checks, once the table is known
    search_index: str | None = None  # the constructor table's trigram index (database/sqlite/trigrams.py)

    @property
    def is_published(self) -> bool:
        """No published field means no object (docs/constructor.md: "No fields ticked: the object is NOT
        published")."""
        return bool(self.fields)


def check_declaration(name: str, raw: Mapping[str, Any], source: Source | str) -> Declaration:
    """The checked declaration. With a `model` the table is known, so every check runs now and the
    validator is compiled with them; a reflected `table` gets `checked_against` when the API starts."""
    source = Source.of(source)
    if not isinstance(name, str) or not OBJECT_NAME.fullmatch(name):
        raise DeclarationError(source, str(name), None, "an object name is 1-100 of [A-Za-z0-9_-]")
    if not isinstance(raw, Mapping):
        raise DeclarationError(
            source, name, None, "a declaration is a dict of the keys in docs/declarations.md"
        )
    fail = _Failer(source, name)
    unknown = sorted(set(raw) - DECLARATION_KEYS)
    if unknown:
        fail(unknown[0], f"unknown key (known keys: {', '.join(sorted(DECLARATION_KEYS))})")
    table, table_name, model = _table_of(raw, fail)
    fields = _names(raw, "fields", fail)
    per_page = _positive_int(raw, "per_page", DEFAULT_PER_PAGE, fail)
    max_per_page = _positive_int(raw, "max_per_page", DEFAULT_MAX_PER_PAGE, fail)
    if per_page > max_per_page:
        fail("per_page", f"per_page ({per_page}) is larger than max_per_page ({max_per_page})")
    operations = _operations(raw, fail)
    _check_writes_are_open(raw, operations, fail)
    scopes = _scopes(raw, name, fail)
    declaration = Declaration(
        name=name,
        source=source,
        table=table,
        table_name=table_name,
        model=model,
        fields=fields,
        filterable=_names(raw, "filterable", fail),
        searchable=_names(raw, "searchable", fail),
        sortable=_names(raw, "sortable", fail),
        relations=_relations(raw, fail),
        per_page=per_page,
        max_per_page=max_per_page,
        default_sort=_default_sort(raw, fail),
        query=_query(raw, fail),
        operations=operations,
        writable=_names(raw, "writable", fail),
        rules=_rules(raw, fail),
        read_scope=scopes[0],
        write_scope=scopes[1],
    )
    return checked_against(declaration, table) if table is not None else declaration


def checked_against(declaration: Declaration, table: sa.Table) -> Declaration:
    """The declaration checked against its table's columns, with its validator compiled."""
    check_columns(declaration, table)
    validator = compile_declared_rules(declaration, table)
    return replace(declaration, validator=validator)


def check_columns(declaration: Declaration, table: sa.Table) -> None:
    """The checks that need the table: every named field is a column, whitelists are published."""
    fail = _Failer(declaration.source, declaration.name)
    columns = set(table.c.keys())
    if len(table.primary_key.columns) != 1:
        fail(
            "model" if declaration.table_name is None else "table",
            f"table '{table.name}' needs a single-column primary key",
        )
    published = set(declaration.fields) | {table.primary_key.columns[0].name}
    for key in ("fields", "writable"):
        for name in getattr(declaration, key):
            if name not in columns:
                fail(key, f"unknown field '{name}' (table '{table.name}' has: {', '.join(sorted(columns))})")
    for key in ("filterable", "searchable", "sortable"):
        for name in getattr(declaration, key):
            if key == "filterable" and PATH_SEPARATOR in name:
                _check_path(declaration, name, fail)
            elif name not in published:
                fail(key, f"field '{name}' is not a published field (add it to 'fields')")
    for name in declaration.rules:
        if name not in columns:
            fail("rules", f"unknown field '{name}'")
    for name, _ in declaration.default_sort:
        if name not in columns:
            fail("default_sort", f"unknown field '{name}'")
    _check_creatable(declaration, table, fail)


def _check_path(declaration: Declaration, path: str, fail: _Failer) -> None:
    """`author.name` in `filterable`: one level through a relation `with` lists. Whether the related
    table has the field is checked when the relation is resolved (registry/paths.py)."""
    relation, _, field = path.partition(PATH_SEPARATOR)
    if not relation or not field or PATH_SEPARATOR in field:
        fail("filterable", f"path '{path}': a path is '<relation>.<field>', one level deep")
    if relation not in {declared.name for declared in declaration.relations}:
        fail("filterable", f"path '{path}': relation '{relation}' is not listed in 'with'")


def _check_creatable(declaration: Declaration, table: sa.Table, fail: _Failer) -> None:
    """With `create`, every NOT NULL column gets a value: from the client, a default, or the API (the
    `published` flag). A column none of them fills would make every create fail in the database."""
    if "create" not in declaration.operations:
        return
    for column in table.columns:
        filled = column.name in declaration.writable or column.name == PUBLISHED_COLUMN
        if not (filled or column.nullable or describe_column(column).has_default):
            fail(
                "writable",
                f"column '{column.name}' is NOT NULL and has no default, so no create could "
                f"fill it: make it writable, or give it a default in the model or the table",
            )


def _check_writes_are_open(raw: Mapping[str, Any], operations: frozenset[Operation], fail: _Failer) -> None:
    """`writable` and `rules` govern writes; on a read-only object they would silently do nothing."""
    if operations & WRITE_OPERATIONS:
        return
    for key in ("writable", "rules"):
        if raw.get(key):
            fail(
                key,
                f"'{key}' is given but the object allows no write operation; add create, update or "
                f"delete to 'operations', or remove '{key}'",
            )


def compile_declared_rules(declaration: Declaration, table: sa.Table) -> Validator:
    """The validator of the declaration's `rules`; a bad rule fails naming the source and object."""
    try:
        return compile_rules(
            declaration.name, {c.name: c for c in table.columns}, declaration.writable, declaration.rules
        )
    except RuleError as error:
        problem = str(error).removeprefix(f"object '{declaration.name}', ")  # the object is named already
        raise DeclarationError(declaration.source, declaration.name, "rules", problem) from None


class _Failer:
    def __init__(self, source: Source, name: str) -> None:
        self.source, self.name = source, name

    def __call__(self, key: str | None, problem: str) -> Any:
        raise DeclarationError(self.source, self.name, key, problem)


def table_of_model(model: Any) -> sa.Table | None:
    if isinstance(model, sa.Table):
        return model
    table = getattr(model, "__table__", None)
    return table if isinstance(table, sa.Table) else None


def _table_of(raw: Mapping[str, Any], fail: _Failer) -> tuple[sa.Table | None, str | None, Any]:
    has_model, has_table = raw.get("model") is not None, raw.get("table") is not None
    if has_model == has_table:
        fail("model", "give exactly one of 'model' (a SQLAlchemy Table or declarative class) or 'table'")
    if has_table:
        if not isinstance(raw["table"], str) or not raw["table"].strip():
            fail("table", "'table' is the name of an existing table")
        return None, raw["table"].strip(), None
    model = _import_model(raw["model"], fail) if isinstance(raw["model"], str) else raw["model"]
    table = table_of_model(model)
    if table is None:
        fail("model", f"{raw['model']!r} is neither a SQLAlchemy Table nor a declarative class")
    return table, None, model


def _import_model(path: str, fail: _Failer) -> Any:
    """`"core.App.models:Article"` (or `"core.App.models.Article"`): a model named by its import path, as
    PHP names `Article::class`, so a model that does not import fails naming the object and the key."""
    module_name, _, attribute = path.partition(":") if ":" in path else path.rpartition(".")
    if not module_name.strip() or not attribute.strip():
        fail("model", f"{path!r} is not an import path such as 'core.App.models:Article'")
    try:
        target: Any = importlib.import_module(module_name.strip())
    except Exception as error:
        fail("model", f"cannot import {path!r}: {type(error).__name__}: {error}")
    for part in attribute.strip().split("."):
        if not hasattr(target, part):
            fail("model", f"cannot import {path!r}: '{module_name.strip()}' has no '{attribute.strip()}'")
        target = getattr(target, part)
    return target


def _names(raw: Mapping[str, Any], key: str, fail: _Failer) -> tuple[str, ...]:
    value = raw.get(key, ())
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, Sequence) or not all(isinstance(item, str) and item for item in value):
        fail(key, "expected a list of field names")
    return tuple(dict.fromkeys(value))


def _positive_int(raw: Mapping[str, Any], key: str, default: int, fail: _Failer) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        fail(key, f"expected a positive integer, got {value!r}")
    return int(value)


def _operations(raw: Mapping[str, Any], fail: _Failer) -> frozenset[Operation]:
    if "operations" not in raw:
        return READ_OPERATIONS
    value = raw["operations"]
    if isinstance(value, str) or not isinstance(value, Sequence):
        fail("operations", f"expected a list of operations from {', '.join(OPERATIONS)}")
    unknown = [item for item in value if item not in OPERATIONS]
    if unknown:
        fail("operations", f"unknown operation {unknown[0]!r} (known: {', '.join(OPERATIONS)})")
    return frozenset(Operation(item) for item in value)


def _scopes(raw: Mapping[str, Any], name: str, fail: _Failer) -> tuple[str, str]:
    value = raw.get("scopes", {})
    if not isinstance(value, Mapping) or set(value) - {"read", "write"}:
        fail("scopes", "expected a map with the keys 'read' and/or 'write'")
    read, write = value.get("read", f"{name}.read"), value.get("write", f"{name}.write")
    for scope in (read, write):
        if not isinstance(scope, str) or not is_valid_scope(scope) or scope == "*" or scope.endswith(".*"):
            fail("scopes", f"{scope!r} is not a scope of the form '<group>.<action>' of [a-z0-9_-]")
    return read, write


def _relations(raw: Mapping[str, Any], fail: _Failer) -> tuple[RelationDeclaration, ...]:
    relations = []
    for item in _names(raw, "with", fail) if not isinstance(raw.get("with"), str) else [raw["with"]]:
        relation, _, field_list = item.partition(":")
        relation = relation.strip()
        if not relation or "." in relation:
            fail("with", f"{item!r}: a relation is 'name' or 'name:field1,field2', one level deep")
        fields = tuple(part.strip() for part in field_list.split(",") if part.strip()) if field_list else None
        relations.append(RelationDeclaration(relation, fields))
    return tuple(relations)


def _default_sort(raw: Mapping[str, Any], fail: _Failer) -> tuple[tuple[str, bool], ...]:
    value = raw.get("default_sort")
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, Sequence) or not all(isinstance(item, str) for item in items):
        fail("default_sort", "expected a field name, '-field' for descending, or a list of them")
    order = tuple((item.strip().lstrip("-"), item.strip().startswith("-")) for item in items if item.strip())
    return order


def _query(raw: Mapping[str, Any], fail: _Failer) -> Any:
    value = raw.get("query")
    if value is not None and not callable(value):
        fail("query", "expected a function that receives a Select and returns a narrowed Select")
    return value


def _rules(raw: Mapping[str, Any], fail: _Failer) -> dict[str, str | tuple[str, ...]]:
    value = raw.get("rules", {})
    if not isinstance(value, Mapping):
        fail("rules", "expected a map from field name to a rule string such as 'required|string|max:200'")
    rules: dict[str, str | tuple[str, ...]] = {}
    for field_name, rule in value.items():
        if isinstance(rule, str):
            rules[field_name] = rule
        elif isinstance(rule, Sequence) and all(isinstance(part, str) for part in rule):
            rules[field_name] = tuple(rule)
        else:
            fail("rules", f"field '{field_name}': expected a rule string")
    return rules
