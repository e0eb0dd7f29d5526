"""docs/integrators.md: "In custom routes the guard is attached as `ApiAuth:<scope>` … or as plain
`ApiAuth`": its answers."""

from datetime import UTC, datetime, timedelta

import pytest

from pb_headless import ApiAuth, ApiRegistry, route
from pb_headless.custom_routes import RouteError

API = "/api/pb/v1"


@route("GET", "/reports/summary", guard="ApiAuth:reports.read")
async def summary(request):
    return {"token": request.state.token.name}


@route("GET", "/ping", guard="ApiAuth")
async def ping(request):
    return {"pong": True, "token": request.state.token.name}


ROUTES = [summary, ping]


def assert_unauthorized(response):
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert set(response.json()) == {"error", "message"}
    assert response.headers["www-authenticate"] == 'Bearer realm="pb_headless"'
    assert response.headers["cache-control"] == "no-store"


async def test_a_guarded_route_without_a_token_answers_401_with_www_authenticate(database, routed_host):
    host = await routed_host(database, ROUTES)
    await host.token("reports.read")
    for path in ("/reports/summary", "/ping"):
        assert_unauthorized(await host.client.get(API + path))


@pytest.mark.parametrize("bad", ["pb_" + "a" * 46, "not-a-token", "pb_", "Bearer"])
async def test_a_guarded_route_with_a_bad_token_answers_401(sqlite_database, routed_host, bad):
    host = await routed_host(sqlite_database, ROUTES)
    await host.token("*")
    assert_unauthorized(await host.client.get(API + "/ping", headers=host.auth(bad)))
    assert_unauthorized(await host.client.get(API + "/reports/summary", headers={"X-API-Key": bad}))


async def test_a_disabled_expired_or_reissued_token_is_refused_by_a_custom_route(database, routed_host):
    host = await routed_host(database, ROUTES)
    await host.token("*", name="keeper")  # keeps the API awake
    disabled = await host.token("reports.read", name="disabled")
    await host.tokens.disable("disabled")
    soon = await host.token("reports.read", name="soon", expires_at=datetime.now(UTC) + timedelta(seconds=2))
    old = await host.token("reports.read", name="reissued")
    await host.tokens.reissue("reissued")
    assert_unauthorized(await host.client.get(API + "/reports/summary", headers=host.auth(disabled)))
    assert_unauthorized(await host.client.get(API + "/reports/summary", headers=host.auth(old)))
    assert (await host.client.get(API + "/reports/summary", headers=host.auth(soon))).status_code == 200


async def test_a_token_without_the_routes_scope_answers_403_naming_the_required_scope(database, routed_host):
    host = await routed_host(database, ROUTES)
    plain = await host.token("articles.read,reports.write")
    response = await host.client.get(API + "/reports/summary", headers=host.auth(plain))
    assert response.status_code == 403
    assert response.json() == {
        "error": "forbidden",
        "required_scope": "reports.read",
        "message": "This operation requires the scope 'reports.read'.",
    }
    assert response.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("scopes", ["reports.read", "reports.*", "*", "articles.read,reports.read"])
async def test_a_token_covering_the_scope_passes_the_guard(sqlite_database, routed_host, scopes):
    host = await routed_host(sqlite_database, ROUTES)
    plain = await host.token(scopes, name="reader")
    response = await host.client.get(API + "/reports/summary", headers=host.auth(plain))
    assert response.status_code == 200
    assert response.json() == {"token": "reader"}


async def test_a_look_alike_group_does_not_pass_the_guard(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    plain = await host.token("reports2.*,report.read,reportsread.x")
    response = await host.client.get(API + "/reports/summary", headers=host.auth(plain))
    assert response.status_code == 403


async def test_plain_apiauth_accepts_any_live_token_whatever_its_scopes(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    plain = await host.token("nothing.relevant", name="any")
    response = await host.client.get(API + "/ping", headers={"X-API-Key": plain})
    assert response.status_code == 200
    assert response.json() == {"pong": True, "token": "any"}


async def test_a_dormant_api_answers_401_on_custom_routes_even_to_a_valid_token(database, host_factory):
    host = await host_factory(database, ApiRegistry(), routes=ROUTES)  # nothing published
    plain = await host.token("*")
    for path in ("/ping", "/reports/summary"):
        assert_unauthorized(await host.client.get(API + path, headers=host.auth(plain)))


async def test_a_dormant_api_answers_401_on_custom_routes_while_no_token_exists(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    assert_unauthorized(await host.client.get(API + "/ping"))


async def test_custom_route_refusals_are_the_generic_endpoints_refusals(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    plain = await host.token("authors.read")

    def answer(response):
        keys = ("www-authenticate", "cache-control", "content-type")
        headers = {key: response.headers.get(key) for key in keys}
        return response.status_code, response.json()["error"], headers

    missing = [await host.client.get(API + path) for path in ("/me", "/ping")]
    assert answer(missing[0]) == answer(missing[1])
    assert missing[0].json() == missing[1].json()
    bad = [await host.client.get(API + path, headers=host.auth("pb_x")) for path in ("/me", "/ping")]
    assert bad[0].json() == bad[1].json()
    custom = await host.client.get(API + "/reports/summary", headers=host.auth(plain))
    writer = await host.token("articles.write")  # reaches articles, cannot read them
    forbidden = await host.client.get(API + "/objects/articles", headers=host.auth(writer))
    assert answer(forbidden)[:2] == answer(custom)[:2] == (403, "forbidden")
    assert answer(forbidden)[2] == answer(custom)[2]
    assert set(forbidden.json()) == set(custom.json()) == {"error", "message", "required_scope"}


def test_the_string_forms_of_the_guard_are_the_guard_itself():
    assert ApiAuth.parse("ApiAuth") == ApiAuth()
    assert ApiAuth.parse("ApiAuth:reports.read") == ApiAuth("reports.read")
    assert ApiAuth.parse(" ApiAuth : reports.read ") == ApiAuth("reports.read")
    assert ApiAuth.parse(None) == ApiAuth()
    assert ApiAuth("reports.read").spec == "ApiAuth:reports.read"
    assert ApiAuth().spec == "ApiAuth"


@pytest.mark.parametrize(
    "guard",
    [
        "apiauth",
        "ApiAuth:",
        "ApiAuth:*",
        "ApiAuth:reports.*",
        "ApiAuth:Reports",
        "Auth:reports.read",
        "ApiAuth:reports read",
    ],
)
def test_an_unknown_or_malformed_guard_is_refused_where_the_route_is_declared(guard):
    with pytest.raises(RouteError, match="route GET /x"):
        route("GET", "/x", guard=guard)
