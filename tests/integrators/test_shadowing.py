"""A custom route that would shadow a generic endpoint, or repeat another route, stops the start."""

import pytest

from pb_headless import ApiRegistry, HeadlessAPI, route
from pb_headless.custom_routes import RouteError


def declared(method, path):
    async def endpoint(request):
        return {}

    return route(method, path)(endpoint)


@pytest.mark.parametrize(
    ("method", "path", "generic"),
    [
        ("GET", "/objects/{name}", "/objects/..."),
        ("GET", "/objects/{name}/{id}", "/objects/..."),
        ("POST", "/objects/special", "/objects/..."),
        ("GET", "/objects/{name}/{id}/comments", "/objects/..."),
        ("GET", "/objects/{n:int}", "/objects/..."),
        ("GET", "/me", "/me"),
        ("POST", "/objects", "/objects"),
        ("GET", "/health/", "/health"),
        ("GET", "/openapi.json", "/openapi.json"),
        ("GET", "/{anything}", "/health"),
        ("GET", "/{rest:path}", "/health"),
        ("GET", "/{group}/{name}", "/objects/..."),
    ],
)
async def test_a_route_shadowing_a_generic_endpoint_fails_at_start(sqlite_database, method, path, generic):
    with pytest.raises(RouteError) as refused:
        HeadlessAPI(sqlite_database, ApiRegistry(), routes=[declared(method, path)])
    message = str(refused.value)
    assert f"custom route {method} {path.rstrip('/')} (declared.<locals>.endpoint in " in message
    assert "test_shadowing.py)" in message
    assert f"would shadow the generic endpoint {generic}" in message
    assert "choose another path" in message


@pytest.mark.parametrize("path", ["/me/reports", "/healthz", "/object/{name}", "/reports/{year:int}", "/"])
async def test_paths_next_to_the_generic_ones_are_free(sqlite_database, path):
    api = HeadlessAPI(sqlite_database, ApiRegistry(), routes=[declared("GET", path)])
    assert [definition.path for definition in api.routes] == [path]


async def test_the_same_method_and_path_declared_twice_fails_naming_both(sqlite_database):
    repeated = r"custom route GET /reports/\{year\} .* repeats GET /reports/\{y:int\}"
    with pytest.raises(RouteError, match=repeated):
        HeadlessAPI(
            sqlite_database,
            ApiRegistry(),
            routes=[declared("GET", "/reports/{y:int}"), declared("GET", "/reports/{year}")],
        )
    HeadlessAPI(
        sqlite_database,
        ApiRegistry(),
        routes=[declared("GET", "/reports/{y}"), declared("POST", "/reports/{y}")],
    )


@pytest.mark.parametrize(
    ("method", "path", "problem"),
    [
        ("GET", "reports", "starts with '/'"),
        ("GET", "/api/pb/v1/reports", "relative to /api/pb/v1"),
        ("TRACE", "/reports", "method 'TRACE'"),
        ("GET", "/reports/{x:decimal}", "Unknown path convertor"),
    ],
)
def test_a_malformed_route_is_refused_where_it_is_declared(method, path, problem):
    with pytest.raises(RouteError, match=problem):
        route(method, path)


def test_something_that_is_not_a_route_is_refused_by_the_api(sqlite_database):
    async def undecorated(request):
        return {}

    with pytest.raises(RouteError, match=r"decorate it with @pb_headless\.route"):
        HeadlessAPI(sqlite_database, ApiRegistry(), routes=[undecorated])


def test_a_missing_routes_file_is_named(sqlite_database, tmp_path):
    with pytest.raises(RouteError, match="no such routes file"):
        HeadlessAPI(sqlite_database, ApiRegistry(), routes=[tmp_path / "core" / "App" / "routes.py"])
