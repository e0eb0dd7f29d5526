"""`ApiRegistry`: where objects are declared, and the catalog of compiled objects built from them.

Three sources, later ones winning for the same name: constructor tables < registrations in code
(`register`, usually from an `OnServiceApiRegister` handler) < the site's declaration file.
"""

from __future__ import annotations

import logging
import runpy
import traceback
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from databases import Database
from sqlalchemy.ext.asyncio import AsyncEngine

from pb_headless.database.backends import Backend, backend_for
from pb_headless.registry.compile import compile_objects
from pb_headless.registry.declaration import Declaration, DeclarationError, check_declaration
from pb_headless.registry.events import Events, OnServiceApiRegister, load_components
from pb_headless.registry.source import Source
from pb_headless.registry.spec import ObjectSpec

log = logging.getLogger("pb_headless")

# What `add_source` takes: an async callable giving declarations (the constructor's tables).
DeclarationProvider = Callable[[Database], Awaitable[Mapping[str, Declaration]]]


class Catalog(Mapping[str, ObjectSpec]):
    """The published objects of one registry version, by name (case-sensitive)."""

    def __init__(self, objects: Mapping[str, ObjectSpec], version: tuple[int, int] = (0, 0)) -> None:
        self._objects = dict(objects)
        self.version = version

    def __getitem__(self, name: str) -> ObjectSpec:
        return self._objects[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._objects)

    def __len__(self) -> int:
        return len(self._objects)


class ApiRegistry:
    """The registry of objects; see the module docstring for the sources and their precedence."""

    def __init__(self, events: Events | None = None) -> None:
        self.events = events or Events()
        self._code: dict[str, Declaration] = {}
        self._file: dict[str, Declaration] = {}
        self._sources: list[DeclarationProvider] = []
        self._engines: dict[str, Backend] = {}  # the backends whose engine reflected, by URL
        self._firing = False
        self._component: str | None = None  # whose OnServiceApiRegister handler is running
        self.version = 0  # moves on every change made in this process

    # -- sources -------------------------------------------------------------------------------
    def register(
        self, name: str, declaration: Mapping[str, Any] | Declaration, *, source: Source | str | None = None
    ) -> None:
        """Publish an object from code; checked at once (DeclarationError names source, object, key).
        Registered from a component's handler, the source is that component; text given as `source`
        is a label shown as written."""
        checked = (
            declaration
            if isinstance(declaration, Declaration)
            else check_declaration(
                name, declaration, Source.of(source) if source else self._registering_source()
            )
        )
        self._code[name] = checked
        self._changed()

    def _registering_source(self) -> Source:
        """What a registration made now names as its source: the component whose handler is running,
        else code."""
        return Source.component(self._component) if self._component else Source.code()

    def _running(self, component: str | None) -> None:
        self._component = component

    def unregister(self, name: str) -> None:
        if self._code.pop(name, None) is not None:
            self._changed()

    def _changed(self) -> None:
        # Handlers of OnServiceApiRegister register on every build: that is the build itself, not a
        # change, or each build would make the next request build again.
        if not self._firing:
            self.version += 1

    def load_file(self, path: str | Path) -> ApiRegistry:
        """Load a declaration file: a Python file defining `API`, a dict from object name to declaration."""
        path = Path(path)
        source = Source.file(path)
        try:
            namespace = runpy.run_path(str(path), run_name="pb_headless_api")
        except DeclarationError:
            raise
        except Exception as error:
            raise DeclarationError(
                source,
                "*",
                None,
                f"cannot load the file{_line_in(path, error)}: {type(error).__name__}: {error}",
            ) from error
        declarations = namespace.get("API")
        if not isinstance(declarations, Mapping):
            raise DeclarationError(source, "*", "API", "the file must define API = {name: declaration, ...}")
        self._file = {name: check_declaration(name, raw, source) for name, raw in declarations.items()}
        self.version += 1
        return self

    def add_source(self, source: DeclarationProvider) -> None:
        """Add a constructor source: an async callable returning declarations of published tables."""
        self._sources.append(source)
        self.version += 1

    def load_components(self, modules: Iterable[str] = ()) -> list[str]:
        """Let satellite components (entry points and named modules) subscribe to the events."""
        loaded = load_components(self.events, modules)
        self.version += 1
        return loaded

    # -- building ------------------------------------------------------------------------------
    async def build(self, database: Database, shared_version: int = 0) -> Catalog:
        """Compile every published object. File and code declarations fail loudly; a broken
        constructor table is logged and left out, so one table cannot take the API down."""
        self._firing = True
        try:
            await self.events.fire(OnServiceApiRegister, self, running=self._running)
        finally:
            self._firing = False
            self._component = None
        constructor: dict[str, Declaration] = {}
        for source in self._sources:
            constructor.update(await source(database))
        merged = {**constructor, **self._code, **self._file}
        published = {name: d for name, d in merged.items() if d.is_published}
        tables, known = await self._tables(database, published.values())
        specs = compile_objects(published, tables, known, skip=self._fail_or_skip)
        return Catalog(specs, (shared_version, self.version))

    @staticmethod
    def _fail_or_skip(declaration: Declaration, error: DeclarationError) -> None:
        """A broken constructor table is logged and left out; a file or code declaration stops the start."""
        if not declaration.source.is_constructor:
            raise error
        log.error("pb_headless: %s is not published: %s", declaration.name, error)

    async def _tables(
        self, database: Database, declarations: Iterable[Declaration]
    ) -> tuple[dict[str, sa.Table], Mapping[str, sa.Table]]:
        """Each declaration's table (named ones reflected), and every table a relation may point at."""
        declarations = list(declarations)
        reflected = sa.MetaData()
        if any(d.table_name for d in declarations):
            wanted = {d.table_name for d in declarations if d.table_name}
            relations = {relation.name for d in declarations for relation in d.relations}
            await self._reflect(database, reflected, wanted, relations)
        tables: dict[str, sa.Table] = {}
        for d in declarations:
            table = d.table if d.table is not None else reflected.tables.get(d.table_name or "")
            if table is not None:
                tables[d.name] = table
        known: dict[str, sa.Table] = dict(reflected.tables)
        for d in declarations:
            if d.table is not None:
                for name, table in d.table.metadata.tables.items():
                    known.setdefault(name, table)
        return tables, known

    async def _reflect(
        self, database: Database, metadata: sa.MetaData, wanted: set[str], relations: set[str]
    ) -> None:
        """Reflect the named tables, the tables their keys point at, and every table a to-many
        relation may name (`comments`, or `<prefix>_comments`), which no key of theirs points at."""
        engine = self._engine(database)
        async with engine.connect() as connection:

            def reflect(connection: Any) -> None:
                inspector = sa.inspect(connection)
                existing = set(inspector.get_table_names())
                candidates = {
                    table
                    for table in existing
                    for relation in relations
                    if table == relation or table.endswith("_" + relation)
                }
                chosen = (wanted & existing) | candidates
                if relations:
                    chosen |= _associations(inspector, wanted & existing, candidates)
                metadata.reflect(connection, only=sorted(chosen), resolve_fks=True)

            await connection.run_sync(reflect)

    def _engine(self, database: Database) -> AsyncEngine:
        """The backend's one SQLAlchemy engine on the host's database (database/backends/)."""
        backend = backend_for(database)
        self._engines[str(database.url)] = backend
        return backend.engine()

    async def close(self) -> None:
        for backend in self._engines.values():
            await backend.dispose_engine()
        self._engines.clear()


def _associations(inspector: Any, wanted: set[str], candidates: set[str]) -> set[str]:
    """Tables with a foreign key to a declared table and one to a table a relation may name: the
    association tables of many-to-many relations, which no name of theirs gives away."""
    found = set()
    for (_, name), keys in inspector.get_multi_foreign_keys().items():
        referred = {key["referred_table"] for key in keys}
        if referred & wanted and referred & candidates and name not in wanted:
            found.add(name)
    return found


def _line_in(path: Path, error: BaseException) -> str:
    """ " (line N)": where in the declaration file loading stopped, so a site owner can go there."""
    if isinstance(error, SyntaxError) and error.lineno:
        return f" (line {error.lineno})"
    file = path.resolve()
    frames = [
        frame for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename).resolve() == file
    ]
    return f" (line {frames[-1].lineno})" if frames and frames[-1].lineno else ""
