"""The document a `*` token gets: valid OpenAPI 3.1, every parameter, body and error answer documented."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
from openapi_spec_validator import validate

from pb_headless.query.limits import (
    MAX_BOUND_VALUES,
    MAX_FILTER_CONDITIONS,
    MAX_LIST_VALUES,
    MAX_SEARCH_PAIRS,
    MAX_TEXT_LENGTH,
    most_search_terms,
)
from tests.openapi.conftest import DOCUMENT, document_of, operations
from tests.support.demo import create_demo, demo_registry


def resolved(document: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """`item`, or what its `$ref` points at inside `document`."""
    while "$ref" in item:
        section, name = item["$ref"].removeprefix("#/components/").split("/")
        item = document["components"][section][name]
    return item


def parameters_of(document: dict[str, Any], path: str, method: str = "get") -> dict[str, dict[str, Any]]:
    listed = document["paths"][path][method].get("parameters", [])
    listed = [resolved(document, parameter) for parameter in listed]
    return {parameter["name"]: parameter for parameter in listed}


def filter_keys(document: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    """Every `filter[f][op]` key the list documents, with the schema of its value; the plain
    `filter[f]` parameter stands for `filter[f][eq]`."""
    keys: dict[str, dict[str, Any]] = {}
    for name, parameter in parameters_of(document, path).items():
        if name.startswith("filter["):
            keys[f"{name}[eq]"] = resolved(document, parameter["schema"])
        elif name == "filter":
            for key, schema in parameter["schema"]["properties"].items():
                keys[key] = resolved(document, schema)
    return keys


async def test_the_document_passes_the_openapi_3_1_validator_on_every_database(database, host_factory):
    await create_demo(database)
    host = await host_factory(database, demo_registry())
    document = await document_of(host, "*")
    validate(document)
    assert document["openapi"] == "3.1.0"


async def test_a_star_token_sees_every_object_operation_service_endpoint_and_custom_route(site):
    document = await document_of(site, "*")
    assert operations(document) == {
        "GET /health",
        "GET /me",
        "GET /objects",
        "GET /openapi.json",
        "GET /objects/articles",
        "POST /objects/articles",
        "GET /objects/articles/{id}",
        "PATCH /objects/articles/{id}",
        "DELETE /objects/articles/{id}",
        "POST /batch",
        "GET /objects/authors",
        "GET /objects/authors/{id}",
        "GET /changes/articles",
        "GET /changes/articles/stream",
        "GET /changes/authors",
        "GET /changes/authors/stream",
        "GET /reports/summary",
        "GET /reports/{year}",
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
        {"bearerAuth": ["articles.write"]},
        {"apiKeyAuth": ["articles.write"]},
    ]
    assert document["paths"]["/health"]["get"]["security"] == []


async def test_each_filterable_field_is_one_plain_parameter_and_the_operators_one_exploded_object(site):
    document = await document_of(site, "*")
    parameters = parameters_of(document, "/objects/articles")
    filters = [name for name in parameters if name.startswith("filter[")]
    assert filters == [
        "filter[id]",
        "filter[title]",
        "filter[category]",
        "filter[price]",
        "filter[rating]",
        "filter[views]",
        "filter[featured]",
        "filter[published_on]",
        "filter[created_at]",
        "filter[author_id]",
    ]
    for name in filters:  # one text box in "Try it out", one argument in a generated client
        assert parameters[name]["in"] == "query" and "style" not in parameters[name]
        assert resolved(document, parameters[name]["schema"])["type"] in ("string", "integer", "number")
    operators = parameters["filter"]
    assert (operators["in"], operators["style"], operators["explode"]) == ("query", "form", True)
    assert operators["schema"]["type"] == "object" and operators["example"] == {}
    keys = filter_keys(document, "/objects/articles")
    for operator in ("eq", "ne", "gt", "gte", "lt", "lte", "like", "in", "nin", "between", "null"):
        assert f"filter[title][{operator}]" in keys
    assert not any(key.endswith("[eq]") for key in operators["schema"]["properties"])  # the plain ones
    assert "filter[price][like]" not in keys  # `like` is a text operator
    assert not any(key.startswith(("filter[body]", "filter[secret]")) for key in keys)
    # 10 filters and `filter`, search, sort, fields, with, limit, offset, page, after, before, count,
    # the Prefer header and If-None-Match
    assert len(parameters) == 23


async def test_list_and_show_document_the_prefer_header_for_strict_handling(site):
    document = await document_of(site, "*")
    for path in ("/objects/articles", "/objects/articles/{id}"):
        prefer = parameters_of(document, path)["Prefer"]
        assert prefer["in"] == "header"
        assert prefer["schema"] == {"type": "string"} and "handling=strict" in prefer["description"]
    assert "Prefer" not in parameters_of(document, "/objects/articles", "post")


async def test_filter_values_are_typed_by_the_field(site):
    keys = filter_keys(await document_of(site, "*"), "/objects/articles")
    assert keys["filter[price][gte]"]["type"] == "string"  # a decimal, kept exact
    assert re.fullmatch(keys["filter[price][gte]"]["pattern"].strip("^$"), "19.990")
    assert keys["filter[views][lt]"]["type"] == "integer"
    assert keys["filter[rating][gt]"]["type"] == "number"
    assert keys["filter[published_on][gte]"]["format"] == "date"
    assert keys["filter[featured][eq]"]["enum"] == ["true", "1", "false", "0"]
    assert keys["filter[featured][null]"]["enum"] == ["true", "1", "false", "0"]
    created = re.compile(keys["filter[created_at][lte]"]["pattern"])
    assert created.match("2026-01-03") and created.match("2026-01-03T14:00:00+02:00")
    assert not created.match("yesterday")


async def test_in_nin_and_between_are_comma_separated_strings_of_the_sizes_the_api_takes(site):
    keys = filter_keys(await document_of(site, "*"), "/objects/articles")
    for key in ("filter[id][in]", "filter[id][nin]", "filter[price][between]", "filter[title][in]"):
        assert keys[key]["type"] == "string", key
    listed = re.compile(keys["filter[id][in]"]["pattern"])
    assert listed.match("1,2,3") and listed.match(",".join(["7"] * MAX_LIST_VALUES))
    assert not listed.match(",".join(["7"] * (MAX_LIST_VALUES + 1))) and not listed.match("1,x")
    pair = re.compile(keys["filter[price][between]"]["pattern"])
    assert pair.match("5.50,19.99") and not pair.match("5.50") and not pair.match("1,2,3")
    titles = re.compile(keys["filter[title][in]"]["pattern"])
    assert titles.match("Hello world,Second hello") and not titles.match("a\x00")


async def test_the_query_bounds_are_stated_in_the_filter_and_search_descriptions(site):
    parameters = parameters_of(await document_of(site, "*"), "/objects/articles")
    for bound in (MAX_FILTER_CONDITIONS, MAX_LIST_VALUES, MAX_TEXT_LENGTH, MAX_BOUND_VALUES):
        assert f" {bound} " in parameters["filter"]["description"], bound
    for bound in (most_search_terms(2), MAX_SEARCH_PAIRS, MAX_TEXT_LENGTH):  # articles: title and body
        assert f" {bound} " in parameters["search"]["description"], bound


async def test_sort_fields_and_with_are_comma_strings_that_name_their_values(site):
    document = await document_of(site, "*")
    parameters = parameters_of(document, "/objects/articles")
    for name in ("sort", "fields", "with"):
        assert parameters[name]["schema"] == {"type": "string"}  # anything else is ignored, not refused
    assert "`id,title,price,views,published_on,created_at`" in parameters["sort"]["description"]
    assert (
        "`id,title,body,category,price,rating,views,featured,published_on,created_at,author_id`"
        in (parameters["fields"]["description"])
    )
    assert "`author,comments`" in parameters["with"]["description"]
    for name in ("search", "limit", "offset", "page"):
        assert parameters[name]["in"] == "query"
    assert parameters["limit"]["schema"]["default"] == 5
    show = parameters_of(document, "/objects/articles/{id}")
    assert set(show) == {"id", "fields", "with", "Prefer", "If-None-Match"}
    assert document["paths"]["/objects/articles/{id}"]["get"]["parameters"][1] == {
        "$ref": "#/components/parameters/articles.fields"
    }  # list and show share it


async def test_write_bodies_are_the_json_schemas_of_the_validators_that_check_them(site):
    document = await document_of(site, "*")
    spec = (await site.api.snapshot()).catalog["articles"]
    schemas = document["components"]["schemas"]
    assert schemas["articles.Create"] == spec.validator.json_schema(partial=False)
    assert schemas["articles.Update"] == spec.validator.json_schema(partial=True)
    create = document["paths"]["/objects/articles"]["post"]
    assert create["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/articles.Create"
    }
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)


async def test_writes_document_their_status_codes_and_every_operation_its_error_envelope(site):
    document = await document_of(site, "*")
    paths = document["paths"]
    assert set(paths["/objects/articles"]["post"]["responses"]) == {
        "201",
        "400",
        "401",
        "403",
        "404",
        "409",
        "413",
        "415",
        "422",
        "429",
        "500",
    }
    assert "Location" in paths["/objects/articles"]["post"]["responses"]["201"]["headers"]
    assert set(document["components"]["responses"]["RateLimited"]["headers"]) == {
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "Retry-After",
    }
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
                    # One type for every error answer: what a generated client decodes an error into.
                    assert envelope == {"$ref": "#/components/schemas/Error"}, (method, path, status)
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["error", "message"]
    assert set(error["properties"]) == {"error", "message", "details", "required_scope", "request_id"}
    assert error["properties"]["details"]["additionalProperties"]["items"] == {"type": "string"}
    assert "`not_found` or `unknown_object`" in responses["NotFound"]["description"]


async def test_records_show_decimals_as_strings_and_relations_as_an_object_or_a_list(site):
    record = (await document_of(site, "*"))["components"]["schemas"]["articles.Record"]
    properties = record["properties"]
    assert properties["price"]["type"] == ["string", "null"]
    assert properties["created_at"] == {"type": ["string", "null"], "format": "date-time"}
    assert properties["author"]["type"] == ["object", "null"]
    assert set(properties["author"]["properties"]) == {"id", "name"}
    assert properties["comments"]["type"] == "array"
    # What the database cannot hold as NULL is always there and never null; the rest may be null.
    assert record["required"] == ["id", "title"]
    assert properties["title"] == {"type": "string"}
    assert properties["author"]["required"] == ["id", "name"]
    assert "secret" not in properties


async def test_the_answers_of_the_api_match_the_documented_record_and_list_schemas(site):
    document = await document_of(site, "*")
    token = await site.token("*")
    listed = (
        await site.client.get(
            "/api/pb/v1/objects/articles?with=author,comments&sort=-price", headers=site.auth(token)
        )
    ).json()
    schemas = {"components": document["components"]}
    list_schema = {**schemas, "$ref": "#/components/schemas/articles.List"}
    jsonschema.Draft202012Validator(list_schema).validate(listed)
    shown = await site.client.get("/api/pb/v1/objects/articles/1?with=author", headers=site.auth(token))
    single_schema = {**schemas, "$ref": "#/components/schemas/articles.Single"}
    jsonschema.Draft202012Validator(single_schema).validate(shown.json())


async def test_writes_answer_as_documented_for_a_token_that_may_read_and_for_one_that_may_not(site):
    """A token without the read scope gets only the key back (docs/writes.md); its document says so,
    while a token that may read gets the whole record, `title` always there."""
    for scopes, schema in (
        ("articles.write", "articles.Key"),
        ("articles.read,articles.write", "articles.Single"),
    ):
        document = await document_of(site, scopes)
        token = await site.token(scopes)
        created = await site.client.post(
            "/api/pb/v1/objects/articles", json={"title": "Documented"}, headers=site.auth(token)
        )
        patched = await site.client.patch(created.headers["location"], json={}, headers=site.auth(token))
        post = document["paths"]["/objects/articles"]["post"]["responses"]["201"]
        patch = resolved(document, document["paths"]["/objects/articles/{id}"]["patch"]["responses"]["200"])
        for answer, documented in ((created, post), (patched, patch)):
            body = documented["content"]["application/json"]["schema"]
            assert body == {"$ref": f"#/components/schemas/{schema}"}, scopes
            validator = jsonschema.Draft202012Validator({"components": document["components"], **body})
            validator.validate(answer.json())
        if schema == "articles.Key":
            assert created.json() == {"data": {"id": created.json()["data"]["id"]}}
            assert "articles.Key" not in (await document_of(site, "*"))["components"]["schemas"]


async def test_a_json_field_is_any_value_and_offers_no_filter_or_sort(sqlite_database, host_factory):
    import sqlalchemy as sa
    from sqlalchemy.schema import CreateTable

    from pb_headless import ApiRegistry

    notes = sa.Table(
        "openapi_notes",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("data", sa.JSON, nullable=True),
        sa.Column("label", sa.String(20)),
    )
    await sqlite_database.execute(str(CreateTable(notes).compile(dialect=sa.dialects.sqlite.dialect())))
    registry = ApiRegistry()
    registry.register(
        "notes",
        {"model": notes, "fields": ["data", "label"], "filterable": ["data", "label"], "sortable": ["data"]},
    )
    host = await host_factory(sqlite_database, registry)
    document = await document_of(host, "*")
    validate(document)
    parameters = parameters_of(document, "/objects/notes")
    assert "filter[data]" not in parameters
    assert "filter[label][like]" in filter_keys(document, "/objects/notes")
    assert "sort" not in parameters
    assert document["components"]["schemas"]["notes.Record"]["properties"]["data"] == {}


async def test_write_schemas_say_what_the_validator_refuses_and_name_the_foreign_keys(site):
    document = await document_of(site, "*")
    create = document["components"]["schemas"]["articles.Create"]["properties"]
    assert create["price"]["multipleOf"] == 0.01  # NUMERIC(10, 2): no third decimal place
    assert (create["price"]["minimum"], create["price"]["maximum"]) == (-99999999.99, 99999999.99)
    assert create["title"]["pattern"] == "^[^\\u0000]*$" and create["title"]["maxLength"] == 200
    for method, path in (("post", "/objects/articles"), ("patch", "/objects/articles/{id}")):
        description = document["paths"][path][method]["description"]
        assert "`author_id` must name an existing `demo_authors.id`" in description, method
        assert "422" in document["paths"][path][method]["responses"]


async def test_a_decimal_with_a_lower_bound_of_zero_takes_no_sign_as_a_string(sqlite_database, host_factory):
    import sqlalchemy as sa
    from sqlalchemy.schema import CreateTable

    from pb_headless import ApiRegistry

    prices = sa.Table(
        "openapi_prices",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("amount", sa.Numeric(6, 2), nullable=True),
    )
    await sqlite_database.execute(str(CreateTable(prices).compile(dialect=sa.dialects.sqlite.dialect())))
    registry = ApiRegistry()
    registry.register(
        "prices",
        {
            "model": prices,
            "fields": ["amount"],
            "operations": ["list", "create"],
            "writable": ["amount"],
            "rules": {"amount": "nullable|numeric|min:0"},
        },
    )
    host = await host_factory(sqlite_database, registry)
    amount = (await document_of(host, "*"))["components"]["schemas"]["prices.Create"]["properties"]["amount"]
    assert amount["minimum"] == 0 and amount["multipleOf"] == 0.01
    assert re.fullmatch(amount["pattern"].strip("^$"), "12.50")
    assert not re.fullmatch(amount["pattern"].strip("^$"), "-12.50")
    token = await host.token("*")
    refused = await host.client.post(
        "/api/pb/v1/objects/prices", json={"amount": "-12.50"}, headers=host.auth(token)
    )
    assert refused.status_code == 422


async def test_a_parameter_has_a_default_only_where_sending_it_means_the_same_as_leaving_it_out(site):
    """Swagger UI and openapi-python-client send a default with every request: a `default` on `offset`
    turned `page` off (offset wins) and had `offset=0` named ignored on every cursor page."""
    document = await document_of(site, "*")
    defaults = {}
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            for parameter in operation.get("parameters", []):
                parameter = resolved(document, parameter)
                if "default" in parameter["schema"]:
                    defaults[(path, method, parameter["name"])] = parameter["schema"]["default"]
    assert {name for _, _, name in defaults} == {"limit", "count"}
    assert defaults[("/objects/articles", "get", "limit")] == 5  # the object's per_page
    assert defaults[("/objects/articles", "get", "count")] == "exact"
