"""The package's modules import each other in one direction only: no circle, however lazy or type-only.

A circle is how a layer starts reaching back into the one above it (the API object into the guard
that authenticates for it); docs/architecture.md draws the layers. Imports are read from the source,
so the test needs no server and notices an import inside a function or under TYPE_CHECKING too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pb_headless"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported(path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules a file imports, anywhere in it (a `from a import b` names `a.b` when
    that is a module of its own, else the package `a`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in known:
            for alias in node.names:
                found.add(
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                )
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_package_takes_part_in_an_import_circle():
    known = modules()
    graph = {name: imported(path, known) - {name} for name, path in known.items()}
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle_of_three():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def package_of(module: str) -> str:
    """The top-level part of the library a module belongs to: `pb_headless.api.reads` → `api`,
    `pb_headless.errors` → `errors` (a module directly in the package is a part of its own)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_ties(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs of parts that import each other, counting any import of any of their modules: the circles
    a module-level test misses (api/a imports changes/b while changes/c imports api/d)."""
    edges = {
        (package_of(module), package_of(target))
        for module, targets in graph.items()
        for target in targets
        if package_of(module) != package_of(target)
    }
    return sorted((a, b) for a, b in edges if a < b and (b, a) in edges)


def test_no_two_parts_of_the_package_import_each_other():
    """Each part (`api/`, `changes/`, `errors.py`, …) sits above or below another, never both
    (docs/architecture.md, "The layers"); a shared piece moves down a layer instead."""
    known = modules()
    graph = {name: imported(path, known) - {name} for name, path in known.items()}
    found = package_ties(graph)
    why = {
        tie: sorted(
            f"{module} → {target}"
            for module, targets in graph.items()
            for target in targets
            if {package_of(module), package_of(target)} == set(tie)
        )
        for tie in found
    }
    assert found == [], why


def test_the_tie_finder_sees_two_parts_importing_each_other_through_different_modules():
    graph = {
        "pb_headless.api.dispatch": {"pb_headless.changes.feed"},
        "pb_headless.changes.endpoints": {"pb_headless.api.context"},
        "pb_headless.errors": {"pb_headless.http.responses"},
        "pb_headless.query.planner": {"pb_headless.errors"},
    }
    assert package_ties(graph) == [("api", "changes")]


def external_imports(path: Path) -> set[str]:
    """Every module a file names in an import statement (the package's own and others')."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def under(name: str, *packages: str) -> bool:
    return any(name == package or name.startswith(f"{package}.") for package in packages)


EDGE = tuple(f"pb_headless.{part}" for part in ("api", "http", "auth", "admin", "cli", "openapi"))


def test_the_database_package_imports_nothing_above_it():
    """The database layer sits below query/ and the HTTP edge (docs/architecture.md): no import back up."""
    known = modules()
    offending = {
        name: sorted(target for target in imported(path, known) if under(target, *EDGE, "pb_headless.query"))
        for name, path in known.items()
        if under(name, "pb_headless.database")
    }
    assert {name: found for name, found in offending.items() if found} == {}


def test_only_the_sqlite_part_touches_the_databases_backend_and_aiosqlite():
    known = modules()
    touching = sorted(
        name
        for name, path in known.items()
        if any(under(module, "databases.backends", "aiosqlite") for module in external_imports(path))
    )
    assert touching and all(under(name, "pb_headless.database.sqlite") for name in touching), touching


# The features built on the read path: they render records exactly as show does.
READ_PATH_FEATURES = ("pb_headless.changes", "pb_headless.webhooks")


def test_nothing_below_query_imports_it():
    """query/ is imported by the HTTP edge, the OpenAPI document, and the change feed and webhooks,
    which render records through the show path."""
    known = modules()
    importers = {
        name
        for name, path in known.items()
        if not under(name, "pb_headless.query")
        and any(under(target, "pb_headless.query") for target in imported(path, known))
    }
    outside = sorted(name for name in importers if not under(name, *EDGE, *READ_PATH_FEATURES))
    assert importers and not outside, outside


def test_the_grammar_and_the_planner_import_no_database_module():
    known = modules()
    for name in ("pb_headless.query.grammar", "pb_headless.query.planner"):
        found = imported(known[name], known)
        assert not [target for target in found if under(target, "pb_headless.database")], name


# --- What differs between the databases lives in database/ (docs/architecture.md, "The database
# backend"): outside it, code asks the backend for a capability by name.

DIALECT_NAMES = {"sqlite", "postgresql", "postgres", "mysql", "mariadb"}
# Migration revisions are frozen history: each says what it did on each database, once.
REVISIONS = "pb_headless.migrations.versions"
# Not yet behind a backend capability: module → how many dialect-name comparisons it still makes.
# A count may only fall; a module leaves the list when it reaches 0 (the test says so).
NOT_YET_MOVED: dict[str, int] = {}
# Libraries whose private attributes are read in database/internals.py only.
LIBRARIES = ("databases", "aiosqlite", "asyncpg", "aiomysql", "sqlalchemy", "alembic")
# Underscored names that are public API: SQLAlchemy's documented `Row._mapping`, argparse's
# subparser class (the standard library's, named in a type hint).
DOCUMENTED = {"_mapping", "_SubParsersAction"}


def checked(*exempt: str) -> dict[str, Path]:
    """The package's modules outside database/, migration revisions and `exempt`."""
    return {
        name: path
        for name, path in modules().items()
        if not under(name, "pb_headless.database", REVISIONS, *exempt)
    }


def is_dialect_name(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in DIALECT_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(is_dialect_name(element) for element in node.elts)
    return False


def dialect_comparisons(source: str) -> int:
    """`x == "sqlite"`, `x in ("mysql", "mariadb")`, `x.startswith("postgres")` and the like."""
    found = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            found += any(is_dialect_name(side) for side in (node.left, *node.comparators))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
            and node.args
            and is_dialect_name(node.args[0])
        ):
            found += 1
    return found


def test_dialect_names_are_compared_in_the_database_package_only():
    counts = {name: dialect_comparisons(path.read_text(encoding="utf-8")) for name, path in checked().items()}
    found = {name: count for name, count in counts.items() if count}
    new = {name: count for name, count in found.items() if count > NOT_YET_MOVED.get(name, 0)}
    assert not new, f"compare dialect names through the backend (database/backends/) instead: {new}"
    moved = sorted(name for name in NOT_YET_MOVED if not found.get(name))
    assert not moved, f"no longer compares dialect names: take it off NOT_YET_MOVED: {moved}"
    fallen = {name: found[name] for name in NOT_YET_MOVED if 0 < found.get(name, 0) < NOT_YET_MOVED[name]}
    assert not fallen, f"fewer comparisons now: lower NOT_YET_MOVED to {fallen}"


def test_the_dialect_comparison_finder_sees_each_form():
    source = (
        'a == "sqlite"\nb in ("mysql", "mariadb")\nc.startswith("postgres")\n"postgresql" != d\ne == "x"\n'
    )
    assert dialect_comparisons(source) == 4


def module_level_weak_maps(source: str) -> list[int]:
    """Lines where a module-level name is bound to a `WeakKeyDictionary` (per-database state found
    again through a global, where the backend should hold it)."""
    lines = []
    for node in ast.parse(source).body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call):
            function = value.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name == "WeakKeyDictionary":
                lines.append(node.lineno)
    return lines


# None left: a column's description is made with its field, once per registry version (FieldSpec).
WEAK_MAPS_NOT_YET_MOVED: set[str] = set()


def test_no_module_outside_the_database_package_keeps_a_weak_map():
    found = {
        name: lines
        for name, path in checked().items()
        if (lines := module_level_weak_maps(path.read_text(encoding="utf-8")))
    }
    assert set(found) - WEAK_MAPS_NOT_YET_MOVED == set(), (
        f"per-database state belongs to the backend: {found}"
    )
    assert set(found) >= WEAK_MAPS_NOT_YET_MOVED, "moved: take it off WEAK_MAPS_NOT_YET_MOVED"


def test_the_weak_map_finder_sees_both_spellings():
    source = (
        "A = weakref.WeakKeyDictionary()\n"
        "B: dict = WeakKeyDictionary()\n"
        "def f():\n    c = WeakKeyDictionary()\n"
    )
    assert module_level_weak_maps(source) == [1, 2]


def context_variables(source: str) -> list[int]:
    """Lines that make a `ContextVar`: ambient state that no signature shows."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name == "ContextVar":
                lines.append(node.lineno)
    return lines


# None left: a compile's parameters come back from the compiler (query/parameters.py `Binder`).
CONTEXT_VARIABLES_NOT_YET_MOVED: set[str] = set()


def test_no_module_outside_the_database_package_makes_a_context_variable():
    found = {
        name: lines
        for name, path in checked().items()
        if (lines := context_variables(path.read_text(encoding="utf-8")))
    }
    assert set(found) - CONTEXT_VARIABLES_NOT_YET_MOVED == set(), f"pass it as an argument: {found}"
    assert set(found) >= CONTEXT_VARIABLES_NOT_YET_MOVED, "moved: take it off CONTEXT_VARIABLES_NOT_YET_MOVED"


def test_the_context_variable_finder_sees_both_spellings():
    source = "A = contextvars.ContextVar('a')\nclass B:\n    b: ContextVar[int] = ContextVar('b')\n"
    assert context_variables(source) == [1, 3]


def own_private_names() -> set[str]:
    """Every `_name` the package defines itself: attributes it assigns, functions, classes, slots."""
    names: set[str] = set()
    for name, path in modules().items():
        if name == "pb_headless.database.internals":  # names the dependencies' attributes, as strings
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)  # __slots__ entries, getattr(self, "_x")
    return {name for name in names if name.startswith("_")}


def private_reaches(source: str, own: set[str]) -> set[str]:
    """Private names read off something that is not the package's own (`x._y` where the package
    defines no `_y`), and private names imported from the dependencies."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if node.attr not in own:
                found.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module and under(node.module, *LIBRARIES):
            found.update(alias.name for alias in node.names if alias.name.startswith("_"))
            found.update(part for part in node.module.split(".") if part.startswith("_"))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
            "getattr",
            "setattr",
            "hasattr",
        ):
            name = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else ""
            if (
                isinstance(name, str)
                and name.startswith("_")
                and not name.startswith("__")
                and name not in own
            ):
                found.add(name)
    return found


def allowed_outside(path: Path) -> set[str]:
    """What database/internals.py lists as read outside it (and checks on the installed versions)."""
    from pb_headless.database import internals

    return set(internals.READ_OUTSIDE.get(path.relative_to(PACKAGE).as_posix(), ()))


def test_no_module_outside_the_database_package_reads_a_dependency_s_private_attribute():
    """databases, aiosqlite, asyncpg, aiomysql, SQLAlchemy and Alembic: their private attributes are
    read in database/internals.py, whose tested list says which (tests/unit/test_internals.py)."""
    own = own_private_names() | DOCUMENTED
    found = {
        name: sorted(names)
        for name, path in checked().items()
        if (names := private_reaches(path.read_text(encoding="utf-8"), own) - allowed_outside(path))
    }
    assert found == {}, f"read it through pb_headless/database/internals.py: {found}"


def test_the_private_reach_finder_sees_a_dependency_s_attribute_but_not_the_package_s_own():
    source = (
        "type_._type_affinity\nself._mine\nfrom sqlalchemy.sql import _typing\ngetattr(raw, '_con', raw)\n"
    )
    assert private_reaches(source, {"_mine"}) == {"_type_affinity", "_typing", "_con"}
