"""A real site folder for registry tests: `core/App/models.py` on `sys.path`, `core/App/api.py` written by
each test.

The site's tables: `site_writers` (writer 2 unpublished), `site_books` (book 3 unpublished, book 5 free,
so outside the file's `query`), `site_book_reviews` (review 2 unpublished).
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from databases import Database
from sqlalchemy.schema import CreateTable

from pb_headless.database.dialect import dialect_of

MODELS = '''
"""The site's tables."""

import sqlalchemy as sa

metadata = sa.MetaData()

writers = sa.Table(
    "site_writers", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("email", sa.String(200), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

books = sa.Table(
    "site_books", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("summary", sa.Text, nullable=True),
    sa.Column("genre", sa.String(50), nullable=True),
    sa.Column("price", sa.Numeric(8, 2), nullable=True),
    sa.Column("pages", sa.Integer, nullable=True),
    sa.Column("released_on", sa.Date, nullable=True),
    sa.Column("added_at", sa.DateTime, nullable=True),
    sa.Column("writer_id", sa.Integer, sa.ForeignKey("site_writers.id"), nullable=True),
    sa.Column("isbn", sa.String(20), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)

reviews = sa.Table(
    "site_book_reviews", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("book_id", sa.Integer, sa.ForeignKey("site_books.id"), nullable=False),
    sa.Column("stars", sa.Integer, nullable=False),
    sa.Column("text", sa.Text, nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)
'''

WRITERS = [
    {"id": 1, "name": "Лев Толстой", "email": "leo@example.com", "published": True},
    {"id": 2, "name": "Hidden", "email": None, "published": False},
]
BOOKS = [
    {
        "id": 1,
        "title": "War and Peace",
        "summary": "Napoleon invades",
        "genre": "novel",
        "price": Decimal("12.50"),
        "pages": 1225,
        "released_on": date(1869, 1, 1),
        "added_at": datetime(2026, 2, 1, 9, 30),
        "writer_id": 1,
        "isbn": "isbn-1",
        "published": True,
    },
    {
        "id": 2,
        "title": "Anna Karenina",
        "summary": "A train",
        "genre": "novel",
        "price": Decimal("9.99"),
        "pages": 864,
        "released_on": date(1878, 1, 1),
        "added_at": datetime(2026, 2, 2, 9, 30),
        "writer_id": 1,
        "isbn": "isbn-2",
        "published": True,
    },
    {
        "id": 3,
        "title": "Draft",
        "summary": None,
        "genre": "novel",
        "price": Decimal("1.00"),
        "pages": 10,
        "released_on": None,
        "added_at": None,
        "writer_id": 1,
        "isbn": "isbn-3",
        "published": False,
    },
    {
        "id": 4,
        "title": "Short stories",
        "summary": "Several",
        "genre": "stories",
        "price": Decimal("5.00"),
        "pages": 200,
        "released_on": None,
        "added_at": None,
        "writer_id": 2,
        "isbn": "isbn-4",
        "published": True,
    },
    {
        "id": 5,
        "title": "Free pamphlet",
        "summary": None,
        "genre": "essay",
        "price": Decimal("0.00"),
        "pages": 12,
        "released_on": None,
        "added_at": None,
        "writer_id": None,
        "isbn": "isbn-5",
        "published": True,
    },
]
REVIEWS = [
    {"id": 1, "book_id": 1, "stars": 5, "text": "Great", "published": True},
    {"id": 2, "book_id": 1, "stars": 1, "text": "meh", "published": False},
    {"id": 3, "book_id": 2, "stars": 4, "text": "Good", "published": True},
]


@dataclass
class SiteFolder:
    """A site folder: `write_api(text)` writes `core/App/api.py` and returns its path."""

    path: Path

    @property
    def api_file(self) -> Path:
        return self.path / "core" / "App" / "api.py"

    def write(self, relative: str, text: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        importlib.invalidate_caches()
        return target

    def write_api(self, text: str) -> Path:
        return self.write("core/App/api.py", text)

    def models(self):
        return importlib.import_module("core.App.models")


def _forget_site_modules(folder: Path) -> None:
    """Forget `core` and every module imported from the folder (a satellite), so no test sees another's."""
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None) or ""
        if name == "core" or name.startswith("core.") or origin.startswith(str(folder)):
            del sys.modules[name]


@pytest.fixture
def site_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SiteFolder]:
    """A fresh site folder first on `sys.path`; a `core` package imported before is put back afterwards."""
    for name in [name for name in sys.modules if name == "core" or name.startswith("core.")]:
        monkeypatch.delitem(sys.modules, name)
    folder = SiteFolder(tmp_path / "site")
    folder.write("core/__init__.py", '"""The site\'s own code."""\n')
    folder.write("core/App/__init__.py", "")
    folder.write("core/App/models.py", MODELS)
    monkeypatch.syspath_prepend(str(folder.path))
    yield folder
    _forget_site_modules(folder.path)


async def create_site_tables(database: Database, site_folder: SiteFolder) -> None:
    """The site's tables and rows, created as the site's own installer would."""
    models = site_folder.models()
    dialect = dialect_of(database)
    for table in models.metadata.sorted_tables:
        await database.execute(str(CreateTable(table).compile(dialect=dialect)))
    for table, rows in ((models.writers, WRITERS), (models.books, BOOKS), (models.reviews, REVIEWS)):
        for row in rows:
            await database.execute(table.insert().values(**row))
    if database.url.dialect == "postgresql":  # explicit ids leave the sequences behind
        for table in (models.writers, models.books, models.reviews):
            await database.execute(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                f"(SELECT MAX(id) FROM {table.name}))"
            )


@pytest.fixture
async def site_database(database, site_folder) -> Database:
    """Each database with the site's tables and rows."""
    await create_site_tables(database, site_folder)
    return database
