"""docs/constructor.md, through HTTP: a host feeds its constructor tables to the
registry, and what the API tab says is what every instance serves, from the next request on."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from pb_headless import ApiRegistry
from pb_headless.constructor import (
    ApiTab,
    ApiTabStore,
    ConstructorField,
    ConstructorSource,
    ConstructorTable,
    create_table,
)
from tests.support.host import Host

NEWS = ConstructorTable(
    "site_news",
    "Новости компании",
    (
        ConstructorField("title", "string", required=True, searchable=True, length=200),
        ConstructorField("body", "text", searchable=True),
        ConstructorField("views", "integer"),
        ConstructorField("secret", "string"),
        ConstructorField("pinned", "boolean"),
    ),
)
# A second table, published throughout, keeps the API awake (docs/authentication.md) while `NEWS` is not.
EVENTS = ConstructorTable("site_events", "События", (ConstructorField("name", "string", required=True),))

NEWS_ROWS = [
    {"title": "Открытие офиса", "body": "Мы открыли офис", "views": 10, "secret": "s1"},
    {"title": "Черновик", "body": "ещё не готово", "views": 5, "secret": "s2", "published": False},
    {"title": "Hello world", "body": "english news", "views": 30, "secret": "s3"},
]
READ = ApiTab(enabled=True, fields=("title", "body", "views"))
OBJECTS = "/api/pb/v1/objects"


@dataclass
class Site:
    """The host, its registry, the host's own table definitions, and a `*` token's headers."""

    host: Host
    registry: ApiRegistry
    tables: dict[str, ConstructorTable]
    headers: dict[str, str]

    def __getattr__(self, name: str):
        return getattr(self.host, name)


@pytest.fixture
async def site(database, host_factory):
    """A host whose registry has the constructor source; both tables exist, only `EVENTS` is published."""
    tables = {NEWS.name: NEWS, EVENTS.name: EVENTS}

    async def load_tables(_database):
        return list(tables.values())

    for table in (NEWS, EVENTS):
        await create_table(database, table)
    news = await create_table(database, NEWS)
    for row in NEWS_ROWS:
        await database.execute(news.insert().values(**row))
    await ApiTabStore(database).save(EVENTS.name, ApiTab(enabled=True, fields=("name",)))
    registry = ApiRegistry()
    registry.add_source(ConstructorSource(load_tables))
    host = await host_factory(database, registry)
    return Site(host, registry, tables, host.auth(await host.token("*")))


async def publish(site, tab: ApiTab, table: ConstructorTable = NEWS) -> None:
    await ApiTabStore(site.database).save(table.name, tab)


async def object_names(site) -> list[str]:
    response = await site.client.get(OBJECTS, headers=site.headers)
    assert response.status_code == 200
    return [item["name"] for item in response.json()["data"]]


# -- publishing: switch and ticked fields -----------------------------------------------------
async def test_the_switch_with_ticked_fields_lists_the_table_under_its_transliterated_name(site):
    await publish(site, READ)
    response = await site.client.get(OBJECTS, headers=site.headers)
    described = {item["name"]: item for item in response.json()["data"]}
    assert described["novosti_kompanii"]["fields"] == ["id", "title", "body", "views"]
    assert described["novosti_kompanii"]["operations"] == ["list", "show"]
    assert described["novosti_kompanii"]["searchable"] == ["title", "body"]
    assert described["novosti_kompanii"]["links"]["self"].endswith("/api/pb/v1/objects/novosti_kompanii")


async def test_a_published_table_serves_only_its_published_rows_and_ticked_fields(site):
    await publish(site, READ)
    response = await site.client.get(f"{OBJECTS}/novosti_kompanii", headers=site.headers)
    assert response.status_code == 200
    body = response.json()
    assert [record["title"] for record in body["data"]] == ["Открытие офиса", "Hello world"]
    assert body["meta"]["total"] == 2
    assert set(body["data"][0]) == {"id", "title", "body", "views"}


async def test_show_serves_a_published_row_and_not_an_unpublished_one(site):
    await publish(site, READ)
    shown = await site.client.get(f"{OBJECTS}/novosti_kompanii/1", headers=site.headers)
    assert shown.status_code == 200
    assert shown.json() == {
        "data": {"id": 1, "title": "Открытие офиса", "body": "Мы открыли офис", "views": 10}
    }
    hidden = await site.client.get(f"{OBJECTS}/novosti_kompanii/2", headers=site.headers)
    assert hidden.status_code == 404
    assert hidden.json()["error"] == "not_found"


async def test_no_ticked_field_leaves_the_table_unknown_even_with_the_switch_on(site):
    await publish(site, ApiTab(enabled=True, fields=()))
    response = await site.client.get(f"{OBJECTS}/novosti_kompanii", headers=site.headers)
    assert response.status_code == 404
    assert response.json()["error"] == "unknown_object"
    assert "novosti_kompanii" not in await object_names(site)


async def test_with_the_switch_off_the_ticked_fields_publish_nothing(site):
    await publish(site, ApiTab(enabled=False, fields=("title",)))
    response = await site.client.get(f"{OBJECTS}/novosti_kompanii/1", headers=site.headers)
    assert response.status_code == 404
    assert response.json()["error"] == "unknown_object"
    assert await object_names(site) == ["sobytiya"]


async def test_a_table_never_given_an_api_tab_is_not_published(site):
    assert await object_names(site) == ["sobytiya"]


async def test_nothing_published_at_all_keeps_the_api_dormant(site):
    await publish(site, ApiTab(enabled=False, fields=("name",)), EVENTS)
    response = await site.client.get(OBJECTS, headers=site.headers)
    assert response.status_code == 401


# -- changes are served without a restart -----------------------------------------------------
async def test_saving_the_api_tab_is_served_on_the_next_request(site):
    assert "novosti_kompanii" not in await object_names(site)
    await publish(site, READ)
    assert "novosti_kompanii" in await object_names(site)
    await publish(site, ApiTab(enabled=True, fields=("title",)))
    response = await site.client.get(f"{OBJECTS}/novosti_kompanii/1", headers=site.headers)
    assert response.json()["data"] == {"id": 1, "title": "Открытие офиса"}
    await publish(site, ApiTab(enabled=False, fields=("title",)))
    assert "novosti_kompanii" not in await object_names(site)


async def test_another_instance_on_the_same_database_serves_the_change_too(site, host_factory):
    other = await host_factory(site.database, site.registry)
    await other.client.get(OBJECTS, headers=site.headers)  # builds its snapshot before the change
    await publish(site, READ)
    response = await other.client.get(f"{OBJECTS}/novosti_kompanii", headers=site.headers)
    assert response.status_code == 200


async def test_a_field_added_to_the_tables_definition_is_served_once_ticked(site):
    from pb_headless.state import bump_version

    await site.database.execute("ALTER TABLE site_news ADD COLUMN rubric VARCHAR(50)")
    site.tables[NEWS.name] = ConstructorTable(
        NEWS.name, NEWS.title, (*NEWS.fields, ConstructorField("rubric", "string", length=50))
    )
    await bump_version(site.database)  # the host's table window says the definitions changed
    await publish(site, ApiTab(enabled=True, fields=("title", "rubric")))
    response = await site.client.get(f"{OBJECTS}/novosti_kompanii/1", headers=site.headers)
    assert response.json()["data"] == {"id": 1, "title": "Открытие офиса", "rubric": None}


# -- operations ---------------------------------------------------------------------------------
async def test_a_read_only_table_answers_405_to_a_create(site):
    await publish(site, READ)
    response = await site.client.post(
        f"{OBJECTS}/novosti_kompanii", headers=site.headers, json={"title": "x"}
    )
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"


async def test_added_write_operations_are_listed_and_served(site):
    await publish(site, ApiTab(enabled=True, fields=("title", "body"), operations=("list", "show", "create")))
    response = await site.client.get(OBJECTS, headers=site.headers)
    news = next(item for item in response.json()["data"] if item["name"] == "novosti_kompanii")
    assert news["operations"] == ["list", "show", "create"]
    created = await site.client.post(
        f"{OBJECTS}/novosti_kompanii", headers=site.headers, json={"title": "Новая", "body": "текст"}
    )
    assert created.status_code == 201
    assert created.json()["data"]["title"] == "Новая"
    shown = await site.client.get(
        f"{OBJECTS}/novosti_kompanii/{created.json()['data']['id']}", headers=site.headers
    )
    assert shown.status_code == 200


async def test_a_required_field_of_the_table_is_a_validation_rule_on_write(site):
    await publish(site, ApiTab(enabled=True, fields=("title", "body"), operations=("list", "show", "create")))
    response = await site.client.post(f"{OBJECTS}/novosti_kompanii", headers=site.headers, json={"body": "x"})
    assert response.status_code == 422
    assert response.json()["error"] == "validation_failed"
    assert list(response.json()["details"]) == ["title"]


async def test_the_field_length_is_a_validation_rule_on_write(site):
    await publish(site, ApiTab(enabled=True, fields=("title",), operations=("list", "show", "create")))
    response = await site.client.post(
        f"{OBJECTS}/novosti_kompanii", headers=site.headers, json={"title": "x" * 201}
    )
    assert response.status_code == 422
    assert list(response.json()["details"]) == ["title"]


async def test_an_unticked_field_is_not_writable(site):
    await publish(site, ApiTab(enabled=True, fields=("title",), operations=("list", "show", "create")))
    response = await site.client.post(
        f"{OBJECTS}/novosti_kompanii", headers=site.headers, json={"title": "ok", "secret": "nope"}
    )
    assert response.status_code == 422
    assert response.json()["details"] == {"secret": ["is not writable"]}


async def test_a_boolean_field_reads_and_writes_as_a_boolean_on_every_database(site):
    writing = ("list", "show", "create")
    await publish(site, ApiTab(enabled=True, fields=("title", "pinned"), operations=writing))
    created = await site.client.post(
        f"{OBJECTS}/novosti_kompanii", headers=site.headers, json={"title": "Pinned", "pinned": True}
    )
    assert created.status_code == 201
    assert created.json()["data"]["pinned"] is True
    found = await site.client.get(
        f"{OBJECTS}/novosti_kompanii", params={"filter[pinned]": "true"}, headers=site.headers
    )
    assert [record["title"] for record in found.json()["data"]] == ["Pinned"]


# -- search --------------------------------------------------------------------------------------
async def test_search_runs_across_the_fields_marked_searchable(site):
    await publish(site, ApiTab(enabled=True, fields=("title", "body", "secret")))
    found = await site.client.get(
        f"{OBJECTS}/novosti_kompanii", params={"search": "ОФИС"}, headers=site.headers
    )
    assert [record["id"] for record in found.json()["data"]] == [1]
    by_body = await site.client.get(
        f"{OBJECTS}/novosti_kompanii", params={"search": "english"}, headers=site.headers
    )
    assert [record["id"] for record in by_body.json()["data"]] == [3]
    not_searchable = await site.client.get(
        f"{OBJECTS}/novosti_kompanii", params={"search": "s3"}, headers=site.headers
    )
    assert not_searchable.json()["data"] == []


# -- URL name and precedence -------------------------------------------------------------------
async def test_an_overridden_url_name_replaces_the_transliterated_one(site):
    await publish(site, ApiTab(enabled=True, fields=("title",), url_name="news"))
    assert (await site.client.get(f"{OBJECTS}/news/1", headers=site.headers)).status_code == 200
    old = await site.client.get(f"{OBJECTS}/novosti_kompanii/1", headers=site.headers)
    assert old.status_code == 404
    assert old.json()["error"] == "unknown_object"


async def test_the_scopes_follow_the_url_name(site):
    await publish(site, READ)
    reader = site.auth(await site.token("novosti_kompanii.read", name="reader"))
    assert (await site.client.get(f"{OBJECTS}/novosti_kompanii", headers=reader)).status_code == 200
    other = site.auth(await site.token("sobytiya.read", name="other"))
    assert (await site.client.get(f"{OBJECTS}/novosti_kompanii", headers=other)).status_code == 404


async def test_a_declaration_registered_in_code_overrides_the_constructor_table_of_that_name(site):
    from pb_headless.constructor import table_for

    await publish(site, READ)
    site.registry.register("novosti_kompanii", {"model": table_for(NEWS), "fields": ["secret"]})
    response = await site.client.get(f"{OBJECTS}/novosti_kompanii/1", headers=site.headers)
    assert response.json()["data"] == {"id": 1, "secret": "s1"}


async def test_two_tables_with_one_url_name_publish_only_the_first(site, caplog):
    await publish(site, READ)
    await publish(site, ApiTab(enabled=True, fields=("name",), url_name="novosti_kompanii"), EVENTS)
    with caplog.at_level(logging.ERROR, logger="pb_headless"):
        response = await site.client.get(f"{OBJECTS}/novosti_kompanii/1", headers=site.headers)
    assert response.json()["data"]["title"] == "Открытие офиса"
    assert "already used by table 'site_news'" in caplog.text


async def test_a_table_whose_sql_table_lacks_a_defined_field_is_left_out_and_the_rest_is_served(site, caplog):
    from pb_headless.state import bump_version

    site.tables[NEWS.name] = ConstructorTable(
        NEWS.name, NEWS.title, (*NEWS.fields, ConstructorField("not_created_yet", "integer"))
    )
    await bump_version(site.database)
    await publish(site, ApiTab(enabled=True, fields=("title", "not_created_yet")))
    with caplog.at_level(logging.ERROR, logger="pb_headless"):
        names = await object_names(site)
    assert names == ["sobytiya"]
    assert "does not match its definition" in caplog.text
