"""The document a `*` token gets: valid OpenAPI 3.1, every parameter, body and error answer documented."""

from __future__ import annotations

from typing import Any

import jsonschema
from openapi_spec_validator import validate

from tests.openapi.conftest import DOCUMENT, document_of, operations
from tests.support.demo import create_demo, demo_registry


def parameters_of(document: dict[str, Any], path: str, method: str = "get") -> dict[str, dict[str, Any]]:
    listed = document["paths"][path][method].get("parameters", [])
    return {parameter["name"]: parameter for parameter in listed}


async def test_the_document_passes_the_openapi_3_1_validator_on_every_database(database, host_factory):
    await create_demo(database)
    host = await host_factory(database, demo_registry())
    document = await document_of(host, "*")
    validate(document)
    assert document["openapi"] == "3.1.0"


async def test_a_star_token_sees_every_object_operation_service_endpoint_and_custom_route(site):
    document = await document_of(site, "*")
    assert operations(document) == {
        "GET /health", "GET /me", "GET /objects", "GET /openapi.json",
        "GET /objects/articles", "POST /objects/articles", "GET /objects/articles/{id}",
        "PATCH /objects/articles/{id}", "DELETE /objects/articles/{id}",
        "GET /objects/authors", "GET /objects/authors/{id}",
        "GET /reports/summary", "GET /reports/{year}",
    }


async def test_the_document_answers_with_no_store_and_needs_a_token(site):
    token = await site.token("*")
    answer = await site.client.get(DOCUMENT, headers=site.auth(token))
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["content-type"].startswith("application/json")
    refused = await site.client.get(DOCUMENT)
    assert refused.status_code == 401
    assert refused.json()["error"] == "unauthorized"


async def test_both_security_schemes_are_declared_and_either_carries_the_scope(site):
    document = await document_of(site, "*")
    schemes = document["components"]["securitySchemes"]
    assert {"type": "http", "scheme": "bearer"}.items() <= schemes["bearerAuth"].items()
    assert {"type": "apiKey", "in": "header", "name": "X-API-Key"}.items() <= schemes["apiKeyAuth"].items()
    assert document["paths"]["/objects/articles"]["post"]["security"] == [
        {"bearerAuth": ["articles.write"]}, {"apiKeyAuth": ["articles.write"]}]
    assert document["paths"]["/health"]["get"]["security"] == []


async def test_every_filterable_field_has_one_parameter_per_operator_typed_by_the_field(site):
    parameters = parameters_of(await document_of(site, "*"), "/objects/articles")
    assert parameters["filter[price][gte]"]["schema"]["type"] == "string"  # a decimal, kept exact
    assert parameters["filter[price][gte]"]["schema"]["pattern"]
    assert parameters["filter[views][lt]"]["schema"]["type"] == "integer"
    assert parameters["filter[rating][gt]"]["schema"]["type"] == "number"
    assert parameters["filter[published_on][gte]"]["schema"]["format"] == "date"
    assert parameters["filter[featured]"]["schema"]["enum"] == ["true", "1", "false", "0"]
    assert parameters["filter[created_at][lte]"]["schema"]["anyOf"] == [
        {"format": "date-time"}, {"format": "date"}]
    for operator in ("eq", "ne", "gt", "gte", "lt", "lte", "like", "in", "nin", "between", "null"):
        assert f"filter[title][{operator}]" in parameters
    assert "filter[title]" in parameters  # the short form of eq
    assert "filter[price][like]" not in parameters  # `like` is a text operator
    assert not any(name.startswith(("filter[body]", "filter[secret]")) for name in parameters)


async def test_in_nin_and_between_are_comma_lists_with_their_sizes(site):
    parameters = parameters_of(await document_of(site, "*"), "/objects/articles")
    sizes_of = {"filter[id][in]": (1, 100), "filter[id][nin]": (1, 100), "filter[price][between]": (2, 2)}
    for name, sizes in sizes_of.items():
        parameter = parameters[name]
        assert (parameter["style"], parameter["explode"]) == ("form", False)
        assert parameter["schema"]["type"] == "array"
        assert (parameter["schema"]["minItems"], parameter["schema"]["maxItems"]) == sizes
    assert parameters["filter[id][in]"]["schema"]["items"]["type"] == "integer"
    assert parameters["filter[title][in]"]["schema"]["items"]["pattern"] == "^[^,\\u0000]*$"


async def test_sort_fields_and_with_document_their_allowed_values(site):
    parameters = parameters_of(await document_of(site, "*"), "/objects/articles")
    allowed = {name: parameters[name]["schema"]["items"]["anyOf"][0]["enum"]
               for name in ("sort", "fields", "with")}
    assert allowed["sort"] == ["id", "-id", "title", "-title", "price", "-price", "views", "-views",
                               "published_on", "-published_on", "created_at", "-created_at"]
    assert allowed["fields"] == ["id", "title", "body", "category", "price", "rating", "views", "featured",
                                 "published_on", "created_at", "author_id"]
    assert allowed["with"] == ["author", "comments"]
    assert "`-price`" in parameters["sort"]["description"]
    for name in ("search", "limit", "offset", "page"):
        assert parameters[name]["in"] == "query"
    assert parameters["limit"]["schema"]["default"] == 5
    show = parameters_of(await document_of(site, "*"), "/objects/articles/{id}")
    assert set(show) == {"id", "fields", "with"}


async def test_write_bodies_are_the_json_schemas_of_the_validators_that_check_them(site):
    document = await document_of(site, "*")
    spec = (await site.api.snapshot()).catalog["articles"]
    schemas = document["components"]["schemas"]
    assert schemas["articles.Create"] == spec.validator.json_schema(partial=False)
    assert schemas["articles.Update"] == spec.validator.json_schema(partial=True)
    create = document["paths"]["/objects/articles"]["post"]
    assert create["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/articles.Create"}
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)


async def test_writes_document_their_status_codes_and_every_operation_its_error_envelope(site):
    document = await document_of(site, "*")
    paths = document["paths"]
    assert set(paths["/objects/articles"]["post"]["responses"]) == {
        "201", "400", "401", "403", "404", "413", "415", "422", "429", "500"}
    assert "Location" in paths["/objects/articles"]["post"]["responses"]["201"]["headers"]
    assert set(paths["/objects/articles/{id}"]["patch"]["responses"]) >= {"200", "404", "413", "415", "422"}
    assert "content" not in paths["/objects/articles/{id}"]["delete"]["responses"]["204"]
    assert set(paths["/objects/articles"]["get"]["responses"]) >= {"200", "401", "403", "404", "422", "429"}
    responses = document["components"]["responses"]
    for path, methods in paths.items():
        for method, operation in methods.items():
            for status, answer in operation["responses"].items():
                if status.startswith(("4", "5")) and "$ref" in answer:
                    name = answer["$ref"].rsplit("/", 1)[1]
                    envelope = responses[name]["content"]["application/json"]["schema"]
                    assert {"error", "message"} <= set(envelope["required"]), (method, path, status)
    assert responses["ValidationFailed"]["content"]["application/json"]["schema"]["properties"]["details"]
    assert responses["NotFound"]["content"]["application/json"]["schema"]["properties"]["error"]["enum"] == [
        "not_found", "unknown_object"]


async def test_records_show_decimals_as_strings_and_relations_as_an_object_or_a_list(site):
    record = (await document_of(site, "*"))["components"]["schemas"]["articles.Record"]
    properties = record["properties"]
    assert properties["price"]["type"] == ["string", "null"]
    assert properties["created_at"] == {"type": ["string", "null"], "format": "date-time"}
    assert properties["author"]["type"] == ["object", "null"]
    assert set(properties["author"]["properties"]) == {"id", "name"}
    assert properties["comments"]["type"] == "array"
    assert record["required"] == ["id"]
    assert "secret" not in properties


async def test_the_answers_of_the_api_match_the_documented_record_and_list_schemas(site):
    document = await document_of(site, "*")
    token = await site.token("*")
    listed = (await site.client.get("/api/pb/v1/objects/articles?with=author,comments&sort=-price",
                                    headers=site.auth(token))).json()
    schemas = {"components": document["components"]}
    list_schema = {**schemas, "$ref": "#/components/schemas/articles.List"}
    jsonschema.Draft202012Validator(list_schema).validate(listed)
    shown = await site.client.get("/api/pb/v1/objects/articles/1?with=author", headers=site.auth(token))
    single_schema = {**schemas, "$ref": "#/components/schemas/articles.Single"}
    jsonschema.Draft202012Validator(single_schema).validate(shown.json())


async def test_a_json_field_is_any_value_and_offers_no_filter_or_sort(sqlite_database, host_factory):
    import sqlalchemy as sa
    from sqlalchemy.schema import CreateTable

    from pb_headless import ApiRegistry

    notes = sa.Table("openapi_notes", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("data", sa.JSON, nullable=True), sa.Column("label", sa.String(20)))
    await sqlite_database.execute(str(CreateTable(notes).compile(dialect=sa.dialects.sqlite.dialect())))
    registry = ApiRegistry()
    registry.register("notes", {"model": notes, "fields": ["data", "label"], "filterable": ["data", "label"],
                                "sortable": ["data"]})
    host = await host_factory(sqlite_database, registry)
    document = await document_of(host, "*")
    validate(document)
    parameters = parameters_of(document, "/objects/notes")
    assert not any(name.startswith("filter[data]") for name in parameters)
    assert "filter[label][like]" in parameters
    assert "sort" not in parameters
    assert document["components"]["schemas"]["notes.Record"]["properties"]["data"] == {}
