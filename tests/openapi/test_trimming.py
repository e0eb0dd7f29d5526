"""`/openapi.json` lists exactly what its token may call, and follows the registry without a restart."""

from __future__ import annotations

from tests.openapi.conftest import document_of, operations
from tests.support.demo import DECLARATIONS, authors

SERVICE = {"GET /health", "GET /me", "GET /objects", "GET /openapi.json"}
UNGUARDED_ROUTE = "GET /reports/{year}"


async def test_a_read_token_sees_only_list_and_show_and_the_changes_of_its_object(site):
    document = await document_of(site, "articles.read")
    assert operations(document) == SERVICE | {
        "GET /objects/articles",
        "GET /objects/articles/{id}",
        "GET /changes/articles",
        "GET /changes/articles/stream",
        UNGUARDED_ROUTE,
    }
    schemas = document["components"]["schemas"]
    assert {"articles.Record", "articles.List", "articles.Single"} <= set(schemas)
    assert "articles.Create" not in schemas and "articles.Update" not in schemas
    assert not any(name.startswith("authors.") for name in schemas)
    assert [tag["name"] for tag in document["tags"]] == ["service", "articles", "custom"]


async def test_a_write_token_sees_only_the_writes_the_object_allows(site):
    document = await document_of(site, "articles.write,authors.write")
    assert operations(document) == SERVICE | {
        "POST /objects/articles",
        "PATCH /objects/articles/{id}",
        "DELETE /objects/articles/{id}",
        "POST /batch",
        UNGUARDED_ROUTE,
    }


async def test_a_group_wildcard_sees_every_operation_of_its_object_and_nothing_of_a_longer_name(site):
    document = await document_of(site, "articles.*")
    assert {op for op in operations(document) if "/objects/" in op} == {
        "GET /objects/articles",
        "POST /objects/articles",
        "GET /objects/articles/{id}",
        "PATCH /objects/articles/{id}",
        "DELETE /objects/articles/{id}",
    }


async def test_custom_routes_appear_only_when_the_token_satisfies_their_guard(site):
    assert "GET /reports/summary" in operations(await document_of(site, "reports.read"))
    assert "GET /reports/summary" in operations(await document_of(site, "reports.*"))
    without = operations(await document_of(site, "articles.read"))
    assert "GET /reports/summary" not in without and UNGUARDED_ROUTE in without
    summary = (await document_of(site, "*"))["paths"]["/reports/summary"]["get"]
    assert summary["security"] == [{"bearerAuth": ["reports.read"]}, {"apiKeyAuth": ["reports.read"]}]
    assert summary["summary"] == "Counts of published articles per category."


async def test_a_token_reaching_no_object_sees_the_service_endpoints_and_unguarded_routes(site):
    document = await document_of(site, "reports.read")
    assert operations(document) == SERVICE | {"GET /reports/summary", UNGUARDED_ROUTE}
    assert not any("." in name for name in document["components"]["schemas"])


async def test_an_object_appears_when_it_is_published_and_leaves_when_it_is_withdrawn(site):
    token = await site.token("*")

    async def paths() -> set[str]:
        answer = await site.client.get("/api/pb/v1/openapi.json", headers=site.auth(token))
        return set(answer.json()["paths"])

    assert "/objects/writers" not in await paths()
    site.api.registry.register("writers", {"model": authors, "fields": ["name"], "operations": ["list"]})
    assert "/objects/writers" in await paths()
    assert "/objects/writers/{id}" not in await paths()  # list only
    site.api.registry.unregister("writers")
    assert "/objects/writers" not in await paths()


async def test_a_declared_scope_map_is_the_scope_the_document_demands(sqlite_database, host_factory):
    from pb_headless import ApiRegistry
    from tests.support.demo import create_demo

    await create_demo(sqlite_database)
    registry = ApiRegistry()
    registry.register("authors", {**DECLARATIONS["authors"], "scopes": {"read": "people.read"}})
    host = await host_factory(sqlite_database, registry)
    assert "/objects/authors" not in (await document_of(host, "authors.read"))["paths"]
    listed = (await document_of(host, "people.read"))["paths"]["/objects/authors"]["get"]
    assert listed["security"] == [{"bearerAuth": ["people.read"]}, {"apiKeyAuth": ["people.read"]}]


async def test_servers_take_scheme_and_host_from_the_request(site):
    document = await document_of(site, "*", {"host": "api.example.org:8443"})
    assert document["servers"] == [{"url": "http://api.example.org:8443/api/pb/v1"}]


async def test_forwarded_scheme_and_host_count_only_from_a_trusted_proxy(sqlite_database, host_factory):
    from tests.support.demo import create_demo, demo_registry

    await create_demo(sqlite_database)
    forwarded = {"x-forwarded-proto": "https", "x-forwarded-host": "public.example.org"}
    untrusted = await host_factory(sqlite_database, demo_registry())
    document = await document_of(untrusted, "*", forwarded)
    assert document["servers"] == [{"url": "http://testserver/api/pb/v1"}]
    trusted = await host_factory(sqlite_database, demo_registry(), trusted_proxies=["203.0.113.0/24"])
    document = await document_of(trusted, "*", forwarded)
    assert document["servers"] == [{"url": "https://public.example.org/api/pb/v1"}]


async def test_the_parts_are_built_once_per_registry_version(site):
    from pb_headless.openapi.document import parts_of

    first = await site.api.snapshot()
    assert parts_of(first, site.api.routes) is parts_of(first, site.api.routes)
    site.api.registry.register("writers", {"model": authors, "fields": ["name"]})
    second = await site.api.snapshot()
    assert second is not first
    assert parts_of(second, site.api.routes) is not parts_of(first, site.api.routes)
