"""docs/library.md "A declaration is checked when it is registered": a broken declaration fails at once,
with one
message naming the source (file, code or component), the object and the key.

A `model` declaration is checked by `load_file` / `register`; what needs the database (a reflected `table`,
relations that another object may publish) is checked when the API starts.
"""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry, DeclarationError, OnServiceApiRegister

GOOD = '"model": books, "fields": ["title", "genre", "pages"]'
WRITES = f'{GOOD}, "operations": ["list", "show", "create", "update"]'


def file_with(site_folder, declaration: str, prelude: str = "from core.App.models import books\n"):
    return site_folder.write_api(f'{prelude}\nAPI = {{\n    "books": {{{declaration}}},\n}}\n')


def assert_names(error: DeclarationError, source: str, name: str, key: str | None) -> None:
    message = str(error)
    where = f"{source}: object '{name}'" + (f", key '{key}'" if key else "")
    assert message.startswith(f"{where}: "), message
    assert (str(error.source), error.object_name, error.key) == (source, name, key)
    assert "\n" not in message


@pytest.mark.parametrize(
    ("declaration", "key", "problem"),
    [
        (f'{GOOD}, "colour": "red"', "colour", "unknown key"),
        ('"model": books, "fields": ["title", "nope"]', "fields", "unknown field 'nope'"),
        ('"model": books, "fields": 5', "fields", "expected a list of field names"),
        (f'{WRITES}, "writable": ["title", "nope"]', "writable", "unknown field 'nope'"),
        (f'{GOOD}, "filterable": ["isbn"]', "filterable", "'isbn' is not a published field"),
        (f'{GOOD}, "filterable": ["nope"]', "filterable", "'nope' is not a published field"),
        (f'{GOOD}, "sortable": ["isbn"]', "sortable", "'isbn' is not a published field"),
        (f'{GOOD}, "searchable": ["summary"]', "searchable", "'summary' is not a published field"),
        (f'{GOOD}, "per_page": "10"', "per_page", "expected a positive integer"),
        (f'{GOOD}, "per_page": 0', "per_page", "expected a positive integer"),
        (f'{GOOD}, "per_page": True', "per_page", "expected a positive integer"),
        (f'{GOOD}, "per_page": 50, "max_per_page": 10', "per_page", "larger than max_per_page"),
        (f'{GOOD}, "max_per_page": -1', "max_per_page", "expected a positive integer"),
        (f'{GOOD}, "default_sort": "nope"', "default_sort", "unknown field 'nope'"),
        (f'{GOOD}, "default_sort": 5', "default_sort", "expected a field name"),
        (f'{GOOD}, "query": "price > 0"', "query", "expected a function"),
        (f'{GOOD}, "operations": ["list", "destroy"]', "operations", "unknown operation 'destroy'"),
        (f'{GOOD}, "operations": "list"', "operations", "expected a list of operations"),
        (f'{GOOD}, "scopes": {{"admin": "books.admin"}}', "scopes", "keys 'read' and/or 'write'"),
        (f'{GOOD}, "scopes": {{"read": "Catalog Read"}}', "scopes", "is not a scope"),
        (f'{GOOD}, "scopes": {{"write": "*"}}', "scopes", "is not a scope"),
        (f'{WRITES}, "writable": ["title"], "rules": {{"title": "requird|string"}}', "rules", "requird"),
        (f'{WRITES}, "rules": {{"nope": "required"}}', "rules", "unknown field 'nope'"),
        (f'{WRITES}, "rules": {{"title": 5}}', "rules", "expected a rule string"),
        (f'{WRITES}, "rules": "required"', "rules", "expected a map"),
        (f'{GOOD}, "with": ["writer.books"]', "with", "one level deep"),
        (f'{GOOD}, "with": [5]', "with", "expected a list"),
        ('"fields": ["title"]', "model", "give exactly one of 'model'"),
        (
            '"model": books, "table": "site_books", "fields": ["title"]',
            "model",
            "give exactly one of 'model'",
        ),
        ('"model": 42, "fields": ["title"]', "model", "neither a SQLAlchemy Table nor a declarative class"),
        ('"table": "", "fields": ["title"]', "table", "the name of an existing table"),
    ],
)
def test_a_broken_model_declaration_fails_when_the_file_is_loaded(site_folder, declaration, key, problem):
    path = file_with(site_folder, declaration)
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert_names(caught.value, str(path), "books", key)
    assert problem in str(caught.value)


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        ("core.App.missing:books", "cannot import 'core.App.missing:books': ModuleNotFoundError"),
        ("core.App.models:nothing", "'core.App.models' has no 'nothing'"),
        ("core.App.models.nothing", "'core.App.models' has no 'nothing'"),
        ("books", "is not an import path"),
    ],
)
def test_a_model_that_does_not_import_names_the_file_the_object_and_the_key(site_folder, model, problem):
    path = file_with(site_folder, f'"model": "{model}", "fields": ["title"]', prelude="")
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert_names(caught.value, str(path), "books", "model")
    assert problem in str(caught.value)


def test_a_file_whose_own_import_fails_names_the_file_and_the_line(site_folder):
    path = site_folder.write_api('"""Declarations."""\n\nfrom core.App.missing import books\n\nAPI = {}\n')
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert str(caught.value) == (
        f"{path}: cannot load the file (line 3): ModuleNotFoundError: No module named 'core.App.missing'"
    )


def test_a_file_that_is_not_python_names_the_file_and_the_line(site_folder):
    path = site_folder.write_api('API = {\n    "books": {"model": books,, },\n}\n')
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert str(caught.value).startswith(f"{path}: cannot load the file (line 2): SyntaxError: ")


def test_a_file_that_fails_while_running_names_the_file_and_the_line(site_folder):
    path = site_folder.write_api("from core.App.models import books\n\nAPI = {'x': books.c.nope}\n")
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert str(caught.value).startswith(f"{path}: cannot load the file (line 3): AttributeError: ")


@pytest.mark.parametrize("text", ["", "API = [('books', {})]\n", "api = {}\n"])
def test_a_file_without_an_api_dict_names_the_file(site_folder, text):
    path = site_folder.write_api(text)
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert str(caught.value) == f"{path}, key 'API': the file must define API = {{name: declaration, ...}}"


def test_a_missing_file_names_the_file(site_folder):
    path = site_folder.path / "core" / "App" / "absent.py"
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert str(caught.value).startswith(f"{path}: cannot load the file: FileNotFoundError")


@pytest.mark.parametrize("name", ["bad name!", "", "a/b", "x" * 101])
def test_an_object_name_outside_the_url_alphabet_fails(site_folder, name):
    path = site_folder.write_api(f"from core.App.models import books\n\nAPI = {{{name!r}: {{{GOOD}}}}}\n")
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert_names(caught.value, str(path), name, None)


def test_a_declaration_that_is_not_a_dict_fails(site_folder):
    path = site_folder.write_api('API = {"books": ["title"]}\n')
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().load_file(path)
    assert_names(caught.value, str(path), "books", None)


def test_a_broken_file_leaves_the_registry_as_it_was(site_folder):
    registry = ApiRegistry()
    registry.load_file(file_with(site_folder, GOOD))
    version = registry.version
    with pytest.raises(DeclarationError):
        registry.load_file(file_with(site_folder, f'{GOOD}, "colour": "red"'))
    assert registry.version == version


# -- registrations in code and by components -----------------------------------------------------------


def test_a_broken_registration_in_code_fails_at_once_naming_code(site_folder):
    books = site_folder.models().books
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().register("books", {"model": books, "fields": ["title"], "sortable": ["isbn"]})
    assert_names(caught.value, "code", "books", "sortable")


def test_a_registration_may_name_its_own_source(site_folder):
    books = site_folder.models().books
    with pytest.raises(DeclarationError) as caught:
        ApiRegistry().register("books", {"model": books, "fields": ["nope"]}, source="component 'shop'")
    assert_names(caught.value, "component 'shop'", "books", "fields")


async def test_a_broken_registration_by_a_component_names_the_component_object_and_key(
    site_folder, sqlite_database, host_factory
):
    site_folder.write(
        "broken_reviews.py",
        """
        from pb_headless import OnServiceApiRegister
        from core.App.models import reviews

        def register(registry):
            registry.register("reviews", {"model": reviews, "fields": ["stars", "nope"]})

        def setup(events):
            events.on(OnServiceApiRegister, register)
    """,
    )
    registry = ApiRegistry()
    registry.load_components(["broken_reviews"])
    host = await host_factory(sqlite_database, registry)
    with pytest.raises(DeclarationError) as caught:
        await host.api.startup()
    message = str(caught.value)
    assert "component 'broken_reviews'" in message
    assert "object 'reviews', key 'fields'" in message and "unknown field 'nope'" in message


async def test_a_handler_of_the_registration_event_that_registers_a_broken_declaration_fails_the_start(
    site_folder, sqlite_database, host_factory
):
    books = site_folder.models().books
    registry = ApiRegistry()
    registry.events.on(
        OnServiceApiRegister, lambda given: given.register("books", {"model": books, "fields": ["nope"]})
    )
    host = await host_factory(sqlite_database, registry)
    with pytest.raises(DeclarationError) as caught:
        await host.api.startup()
    assert "object 'books', key 'fields'" in str(caught.value)


# -- what only the database can tell: at start --------------------------------------------------------


@pytest.mark.parametrize(
    ("declaration", "key", "problem"),
    [
        ('"table": "no_such_table", "fields": ["title"]', "table", "table 'no_such_table' does not exist"),
        ('"table": "site_books", "fields": ["title", "nope"]', "fields", "unknown field 'nope'"),
        (
            '"table": "site_books", "fields": ["title"], "filterable": ["isbn"]',
            "filterable",
            "not a published field",
        ),
        (
            '"table": "site_books", "fields": ["title"], "operations": ["create"], "writable": ["title"], '
            '"rules": {"title": "requird"}',
            "rules",
            "requird",
        ),
        (
            '"table": "site_books", "fields": ["title"], "with": ["writer"]',
            "with",
            "relation 'writer': no field list and no object publishes table 'site_writers'",
        ),
        (
            '"model": books, "fields": ["title"], "with": ["writer"]',
            "with",
            "relation 'writer': no field list and no object publishes table 'site_writers'",
        ),
        (
            '"model": books, "fields": ["title"], "with": ["publisher:id,name"]',
            "with",
            "relation 'publisher' matches no foreign key",
        ),
        (
            '"table": "site_books", "fields": ["title"], "with": ["publisher:id,name"]',
            "with",
            "relation 'publisher' matches no foreign key",
        ),
        (
            '"model": books, "fields": ["title"], "with": ["writer:id,nickname"]',
            "with",
            "relation 'writer': unknown field 'nickname'",
        ),
    ],
)
async def test_what_needs_the_database_fails_when_the_api_starts(
    site_database, site_folder, host_factory, declaration, key, problem
):
    path = file_with(site_folder, declaration)
    registry = ApiRegistry().load_file(path)
    host = await host_factory(site_database, registry)
    with pytest.raises(DeclarationError) as caught:
        await host.api.startup()
    assert_names(caught.value, str(path), "books", key)
    assert problem in str(caught.value)


async def test_a_request_to_an_api_that_cannot_start_answers_500_without_the_path(
    site_database, site_folder, host_factory
):
    path = file_with(site_folder, '"table": "no_such_table", "fields": ["title"]')
    host = await host_factory(site_database, ApiRegistry().load_file(path))
    plain = await host.token("*")
    response = await host.client.get("/api/pb/v1/objects/books", headers=host.auth(plain))
    assert response.status_code == 500
    assert response.json()["error"] == "server_error"
    assert str(site_folder.path) not in response.text and "no_such_table" not in response.text
