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
