"""The same `ApiAuth` guard on routes the host defines outside the API sub-application."""

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import ApiAuth, ApiRegistry, CORSMiddleware, HeadlessAPI, NotFound, TokenStore
from tests.support.demo import create_demo, demo_registry

USERS = {"3": {"id": 3, "username": "reporter"}}


@ApiAuth("reports.read")
async def report(request: Request) -> JSONResponse:
    user = request.state.user
    count = await request.state.database.fetch_val("SELECT COUNT(*) FROM demo_authors")
    name = user["username"] if user else None
    return JSONResponse({"token": request.state.token.name, "user": name, "authors": count})


@ApiAuth()
async def any_token(request: Request) -> PlainTextResponse:
    if request.query_params.get("missing"):
        raise NotFound("Nothing by that name.")
    return PlainTextResponse(f"hello {request.state.principal.token.name}")


@ApiAuth("reports.read")
def blocking_report(request: Request) -> PlainTextResponse:  # a plain function, as Starlette allows
    return PlainTextResponse("computed in a thread")


async def host_page(request: Request) -> PlainTextResponse:
    return PlainTextResponse("the host's page")


def site_routes(api):
    return [
        Route("/", host_page),
        Route("/reports", report),
        Route("/hello", any_token),
        Route("/slow", blocking_report),
        Mount("/api/pb/v1", app=api),
    ]


async def client_for(app):
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


@pytest.fixture
async def site(database, request):
    """A Starlette host wrapped in CORSMiddleware, with guarded routes of its own."""
    await create_demo(database)
    rate_limit = getattr(request, "param", 120)
    api = HeadlessAPI(database, demo_registry(), user_loader=USERS.get, rate_limit=rate_limit)
    async with await client_for(CORSMiddleware(Starlette(routes=site_routes(api)), api=api)) as client:
        yield client, TokenStore(database)


async def test_a_host_route_answers_401_403_and_200_like_the_api(site):
    client, tokens = site
    _, reader = await tokens.create("reader", "reports.read", user_id=3)
    _, other = await tokens.create("other", "authors.read")
    missing = await client.get("/reports")
    assert missing.status_code == 401
    assert missing.json()["error"] == "unauthorized"
    assert missing.headers["www-authenticate"] == 'Bearer realm="pb_headless"'
    assert missing.headers["cache-control"] == "no-store"
    assert (await client.get("/reports", headers={"Authorization": "Bearer pb_nope"})).status_code == 401
    forbidden = await client.get("/reports", headers={"Authorization": f"Bearer {other}"})
    assert forbidden.status_code == 403
    assert forbidden.json()["required_scope"] == "reports.read"
    allowed = await client.get("/reports", headers={"X-API-Key": reader})
    assert allowed.status_code == 200
    assert allowed.json() == {"token": "reader", "user": "reporter", "authors": 3}


async def test_a_host_route_answers_exactly_what_the_api_answers(site):
    client, tokens = site
    _, writer = await tokens.create("writer", "articles.write")  # reaches articles, may not read them
    pairs = [
        ({}, "/api/pb/v1/me"),
        ({"Authorization": "Bearer pb_nope"}, "/api/pb/v1/me"),
        ({"Authorization": f"Bearer {writer}"}, "/api/pb/v1/objects/articles"),
    ]
    for headers, api_path in pairs:
        host, api = await client.get("/reports", headers=headers), await client.get(api_path, headers=headers)
        assert host.status_code == api.status_code
        assert set(host.json()) == set(api.json())
        assert host.json()["error"] == api.json()["error"]
        for key in ("www-authenticate", "cache-control", "content-type"):
            assert host.headers.get(key) == api.headers.get(key)


@pytest.mark.parametrize("site", [2], indirect=True)
async def test_a_host_route_is_not_rate_limited_by_the_api(site):
    client, tokens = site
    _, reader = await tokens.create("reader", "reports.read")
    for _ in range(4):  # the API's limit is 2 here
        answer = await client.get("/reports", headers={"X-API-Key": reader})
        assert answer.status_code == 200
        assert not any(key.startswith("x-ratelimit") for key in answer.headers)


async def test_plain_apiauth_on_a_host_route_accepts_any_live_token_and_renders_errors(site):
    client, tokens = site
    _, plain = await tokens.create("anyone", "authors.read")
    auth = {"Authorization": f"Bearer {plain}"}
    assert (await client.get("/hello", headers=auth)).text == "hello anyone"
    missing = await client.get("/hello?missing=1", headers=auth)
    assert missing.status_code == 404
    assert missing.json() == {"error": "not_found", "message": "Nothing by that name."}
    assert (await client.get("/slow", headers=auth)).status_code == 403


async def test_a_plain_function_endpoint_is_guarded_too(site):
    client, tokens = site
    _, reader = await tokens.create("reader", "reports.read")
    answer = await client.get("/slow", headers={"X-API-Key": reader})
    assert (answer.status_code, answer.text) == (200, "computed in a thread")


async def test_a_host_route_answers_401_while_the_api_is_dormant(database):
    api = HeadlessAPI(database, ApiRegistry())  # nothing is published
    async with await client_for(CORSMiddleware(Starlette(routes=site_routes(api)), api=api)) as client:
        _, plain = await TokenStore(database).create("early", "*")
        dormant = await client.get("/hello", headers={"X-API-Key": plain})
        assert dormant.status_code == 401
        assert dormant.headers["www-authenticate"] == 'Bearer realm="pb_headless"'


async def test_the_guard_finds_the_api_in_the_apps_state_without_the_middleware(sqlite_database):
    await create_demo(sqlite_database)
    api = HeadlessAPI(sqlite_database, demo_registry())
    app = Starlette(routes=site_routes(api))
    app.state.pb_headless = api
    _, plain = await TokenStore(sqlite_database).create("state", "reports.read")
    async with await client_for(app) as client:
        assert (await client.get("/reports")).status_code == 401
        assert (await client.get("/reports", headers={"X-API-Key": plain})).json()["token"] == "state"


async def test_a_host_that_never_told_the_guard_about_the_api_fails_loudly(sqlite_database):
    app = Starlette(routes=[Route("/reports", report)])
    async with await client_for(app) as client:
        with pytest.raises(RuntimeError, match="CORSMiddleware"):
            await client.get("/reports")


async def test_authorize_serves_hosts_that_call_the_guard_themselves(site, database):
    _, tokens = site
    _, plain = await tokens.create("direct", "reports.read")
    host = Starlette()
    host.state.pb_headless = HeadlessAPI(database, demo_registry())
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/x",
        "headers": [(b"x-api-key", plain.encode())],
        "query_string": b"",
        "app": host,
    }
    principal = await ApiAuth("reports.read").authorize(Request(scope))
    assert principal.token.name == "direct"
    assert principal.has_scope("reports.read")
