"""`ApiAuth` as a FastAPI dependency: `Depends(ApiAuth("<scope>").dependency)` answers as the API does."""

from typing import Annotated

import httpx
from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse

from examples.fastapi_host.app import create_app
from examples.fastapi_host.models import staff
from pb_headless import ApiAuth, ApiError, ApiRegistry, CORSMiddleware, HeadlessAPI, Principal, TokenStore
from tests.hosts.lifespan import serving
from tests.support.demo import create_demo, demo_registry


def guarded_app(api, **fastapi_options):
    app = FastAPI(**fastapi_options)

    @app.get("/reports")
    async def reports(principal: Annotated[Principal, Depends(ApiAuth("reports.read").dependency)]):
        return {"token": principal.token.name}

    @app.get("/anyone")
    async def anyone(principal: Annotated[Principal, Depends(ApiAuth().dependency)]):
        return {"token": principal.token.name}

    app.mount("/api/pb/v1", api)
    app.add_middleware(CORSMiddleware, api=api)
    return app


def client_for(app):
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


async def test_the_very_first_refusal_of_a_fresh_app_is_the_apis_envelope(sqlite_database):
    await create_demo(sqlite_database)
    await TokenStore(sqlite_database).create("someone", "authors.read")
    async with client_for(guarded_app(HeadlessAPI(sqlite_database, demo_registry()))) as client:
        refused = await client.get("/reports")  # no request has reached the app before
        generic = await client.get("/api/pb/v1/me")
    assert refused.status_code == generic.status_code == 401
    assert refused.json() == generic.json()
    for key in ("www-authenticate", "cache-control", "content-type"):
        assert refused.headers[key] == generic.headers[key]


async def test_the_dependency_answers_403_with_the_required_scope_and_passes_any_live_token(sqlite_database):
    await create_demo(sqlite_database)
    _, plain = await TokenStore(sqlite_database).create("someone", "authors.read")
    auth = {"X-API-Key": plain}
    async with client_for(guarded_app(HeadlessAPI(sqlite_database, demo_registry()))) as client:
        forbidden = await client.get("/reports", headers=auth)
        assert forbidden.status_code == 403
        assert forbidden.json()["required_scope"] == "reports.read"
        assert forbidden.headers["cache-control"] == "no-store"
        assert (await client.get("/anyone", headers=auth)).json() == {"token": "someone"}


async def test_the_dependency_answers_401_while_the_api_is_dormant(sqlite_database):
    _, plain = await TokenStore(sqlite_database).create("early", "*")
    async with client_for(guarded_app(HeadlessAPI(sqlite_database, ApiRegistry()))) as client:
        dormant = await client.get("/anyone", headers={"X-API-Key": plain})
    assert dormant.status_code == 401
    assert dormant.headers["www-authenticate"] == 'Bearer realm="pb_headless"'


async def test_a_hosts_own_api_error_handler_is_left_alone(sqlite_database):
    async def teapot(request, error):
        return JSONResponse({"host": "handled", "status": error.status_code}, status_code=418)

    await create_demo(sqlite_database)
    await TokenStore(sqlite_database).create("someone", "authors.read")
    app = guarded_app(HeadlessAPI(sqlite_database, demo_registry()), exception_handlers={ApiError: teapot})
    async with client_for(app) as client:
        answer = await client.get("/reports")
    assert (answer.status_code, answer.json()) == (418, {"host": "handled", "status": 401})


async def test_fastapis_own_openapi_document_still_builds_with_the_dependency(sqlite_database):
    async with client_for(guarded_app(HeadlessAPI(sqlite_database, demo_registry()))) as client:
        document = await client.get("/openapi.json")
    assert document.status_code == 200
    assert "/reports" in document.json()["paths"]


async def test_the_record_shops_acting_user_is_its_staff_member_while_active(database):
    async with serving(create_app(str(database.url))) as client:
        ids = {row.username: row.id for row in await database.fetch_all(staff.select())}
        clerk, former = ids["clerk"], ids["former-clerk"]
        tokens = TokenStore(database)
        _, active = await tokens.create("clerk-app", "records.read", user_id=clerk)
        _, blocked = await tokens.create("former-app", "records.read", user_id=former)
        report = await client.get("/reports/records/2", headers={"X-API-Key": active})
        assert report.json() == {
            "title": "Blue Train",
            "price": "19.50",
            "token": "clerk-app",
            "acting_user": "clerk",
        }
        genres = await client.get("/api/pb/v1/records/genres", headers={"X-API-Key": active})
        assert genres.json()["asked_by"] == "clerk"
        for path in ("/reports/records/2", "/api/pb/v1/records/genres"):
            refused = await client.get(path, headers={"X-API-Key": blocked})
            assert (refused.status_code, refused.json()["error"]) == (401, "unauthorized")


async def test_an_api_error_raised_in_a_fastapi_endpoint_renders_the_envelope(sqlite_database):
    async with serving(create_app(str(sqlite_database.url))) as client:
        _, plain = await TokenStore(sqlite_database).create("reader", "records.read")
        unpublished = await client.get("/reports/records/4", headers={"X-API-Key": plain})
        assert unpublished.status_code == 404
        assert unpublished.json() == {"error": "not_found", "message": "There is no record 4."}
        not_a_number = await client.get("/reports/records/abc", headers={"X-API-Key": plain})
        assert not_a_number.status_code == 422  # FastAPI's own validation, before the guard's endpoint
