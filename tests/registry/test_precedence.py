"""docs/library.md: the registry's sources and their precedence for one name (constructor < code < file), and
`OnServiceApiRegister` handlers, satellites included, registering objects (docs/declarations.md)."""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry, OnServiceApiRegister
from pb_headless.constructor import (
    ApiTab,
    ApiTabStore,
    ConstructorField,
    ConstructorSource,
    ConstructorTable,
    create_table,
)

OBJECTS = "/api/pb/v1/objects"
ITEMS = ConstructorTable("shop_items", "Товары", (ConstructorField("label", "string", required=True),))
FILE = """
from core.App.models import books

API = {"books": {"model": books, "fields": ["title", "pages"]}}
"""


@pytest.fixture
async def constructor(site_database):
    """A constructor table published under the URL name `books`, the same name the code and file use."""
    items = await create_table(site_database, ITEMS)
    await site_database.execute(items.insert().values(label="A constructor row"))
    tab = ApiTab(enabled=True, fields=("label",), url_name="books")
    await ApiTabStore(site_database).save(ITEMS.name, tab)

    async def load_tables(_database):
        return [ITEMS]

    return ConstructorSource(load_tables)


async def host_for(site_database, host_factory, registry):
    host = await host_factory(site_database, registry)
    host.headers = host.auth(await host.token("*", name="all"))
    return host


async def fields_of(host, name: str = "books") -> list[str]:
    response = await host.client.get(f"{OBJECTS}/{name}?limit=1", headers=host.headers)
    assert response.status_code == 200, response.text
    return list(response.json()["data"][0])


async def test_the_constructor_alone_serves_its_table(site_database, constructor, host_factory):
    registry = ApiRegistry()
    registry.add_source(constructor)
    assert await fields_of(await host_for(site_database, host_factory, registry)) == ["id", "label"]


async def test_a_registration_in_code_overrides_the_constructor(
    site_database, site_folder, constructor, host_factory
):
    registry = ApiRegistry()
    registry.add_source(constructor)
    registry.register("books", {"model": site_folder.models().books, "fields": ["title"]})
    assert await fields_of(await host_for(site_database, host_factory, registry)) == ["id", "title"]


async def test_the_declaration_file_overrides_code_and_constructor(
    site_database, site_folder, constructor, host_factory
):
    registry = ApiRegistry()
    registry.add_source(constructor)
    registry.load_file(site_folder.write_api(FILE))
    registry.register("books", {"model": site_folder.models().books, "fields": ["title"]})  # after the file
    assert await fields_of(await host_for(site_database, host_factory, registry)) == ["id", "title", "pages"]


async def test_the_declaration_file_overrides_the_constructor(
    site_database, site_folder, constructor, host_factory
):
    registry = ApiRegistry().load_file(site_folder.write_api(FILE))
    registry.add_source(constructor)
    assert await fields_of(await host_for(site_database, host_factory, registry)) == ["id", "title", "pages"]


async def test_withdrawing_a_code_registration_brings_the_constructor_table_back(
    site_database, site_folder, constructor, host_factory
):
    registry = ApiRegistry()
    registry.add_source(constructor)
    registry.register("books", {"model": site_folder.models().books, "fields": ["title"]})
    host = await host_for(site_database, host_factory, registry)
    assert await fields_of(host) == ["id", "title"]
    registry.unregister("books")
    assert await fields_of(host) == ["id", "label"]


async def test_a_registration_made_while_serving_is_served_from_the_next_request(
    site_database, site_folder, host_factory
):
    registry = ApiRegistry()
    registry.register("books", {"model": site_folder.models().books, "fields": ["title"]})
    host = await host_for(site_database, host_factory, registry)
    assert (await host.client.get(f"{OBJECTS}/writers", headers=host.headers)).status_code == 404
    registry.register("writers", {"model": site_folder.models().writers, "fields": ["name"]})
    assert await fields_of(host, "writers") == ["id", "name"]


# -- OnServiceApiRegister ---------------------------------------------------------------------------


async def test_a_handler_of_the_registration_event_publishes_objects(
    site_database, site_folder, host_factory
):
    registry = ApiRegistry()
    received = []

    def register_objects(given):
        received.append(given)
        given.register("books", {"model": site_folder.models().books, "fields": ["title"]})

    registry.events.on(OnServiceApiRegister, register_objects)
    host = await host_for(site_database, host_factory, registry)
    response = await host.client.get(OBJECTS, headers=host.headers)
    assert [item["name"] for item in response.json()["data"]] == ["books"]
    assert received == [registry]


async def test_an_async_handler_publishes_objects_too(site_database, site_folder, host_factory):
    registry = ApiRegistry()

    async def register_objects(given):
        given.register("writers", {"model": site_folder.models().writers, "fields": ["name"]})

    registry.events.on(OnServiceApiRegister, register_objects)
    host = await host_for(site_database, host_factory, registry)
    assert await fields_of(host, "writers") == ["id", "name"]


async def test_the_registration_event_fires_once_per_build_not_once_per_request(
    site_database, site_folder, host_factory
):
    registry = ApiRegistry()
    calls = []

    def register_objects(given):
        calls.append(1)
        given.register("books", {"model": site_folder.models().books, "fields": ["title"]})

    registry.events.on(OnServiceApiRegister, register_objects)
    host = await host_for(site_database, host_factory, registry)
    for _ in range(4):
        assert await fields_of(host) == ["id", "title"]
    assert len(calls) == 1


async def test_the_declaration_file_overrides_what_a_handler_registers(
    site_database, site_folder, host_factory
):
    books = site_folder.models().books
    registry = ApiRegistry().load_file(site_folder.write_api(FILE))
    registry.events.on(
        OnServiceApiRegister, lambda given: given.register("books", {"model": books, "fields": ["genre"]})
    )
    assert await fields_of(await host_for(site_database, host_factory, registry)) == ["id", "title", "pages"]


async def test_a_satellite_component_registers_its_objects_through_setup(
    site_database, site_folder, host_factory
):
    site_folder.write(
        "shop_reviews.py",
        '''
        """A satellite component: its setup(events) subscribes to the registration event."""

        from pb_headless import OnServiceApiRegister
        from core.App.models import reviews


        def register_objects(registry):
            registry.register("reviews", {"model": reviews, "fields": ["book_id", "stars"],
                                          "filterable": ["stars"]})


        def setup(events):
            events.on(OnServiceApiRegister, register_objects)
    ''',
    )
    registry = ApiRegistry()
    assert "shop_reviews" in registry.load_components(["shop_reviews"])
    host = await host_for(site_database, host_factory, registry)
    response = await host.client.get(f"{OBJECTS}/reviews?filter[stars][gte]=4", headers=host.headers)
    assert response.json()["data"] == [
        {"id": 1, "book_id": 1, "stars": 5},
        {"id": 3, "book_id": 2, "stars": 4},
    ]
