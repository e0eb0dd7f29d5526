"""The administration area's documentation endpoints (docs/admin.md): `/mgr/pb/docs`,
`/mgr/pb/openapi.json`."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from openapi_spec_validator import validate
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount

from pb_headless import CORSMiddleware, HeadlessAPI
from pb_headless.admin import viewer
from pb_headless.admin.docs import SWAGGER_UI_CDN, docs_routes
from pb_headless.openapi import full_document
from tests.openapi.demo_app import report_of_year, report_summary
from tests.support.demo import create_demo, demo_registry

SIGNED_IN = {"x-test-admin": "owner"}
LOGIN = "/mgr/login"


def current_admin(request: Request) -> dict[str, Any] | None:
    """The host's guard, reduced to a header: the docs endpoints only ask it who is signed in."""
    name = request.headers.get("x-test-admin")
    return {"username": name} if name else None


async def admin_host(
    database,
    *,
    login_url: str | None = LOGIN,
    trusted: tuple[str, ...] = (),
    viewer_url: str | None = None,
    local_viewer: bool | None = False,
) -> httpx.AsyncClient:
    api = HeadlessAPI(
        database, demo_registry(), routes=[report_summary, report_of_year], trusted_proxies=trusted
    )
    options: dict[str, Any] = {"viewer_url": viewer_url} if viewer_url else {}
    options["local_viewer"] = local_viewer
    admin = Starlette(routes=docs_routes(api, current_admin, login_url, **options))
    site = Starlette(routes=[Mount("/mgr/pb", app=admin), Mount("/api/pb/v1", app=api)])
    transport = httpx.ASGITransport(app=CORSMiddleware(site, api=api), client=("203.0.113.7", 50000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


@pytest.fixture
async def client(sqlite_database):
    await create_demo(sqlite_database)
    async with await admin_host(sqlite_database) as client:
        yield client


async def test_the_docs_page_without_ctx_mgr_is_not_found_even_when_signed_in(client):
    for path in ("/mgr/pb/docs", "/mgr/pb/docs?ctx=web"):
        assert (await client.get(path, headers=SIGNED_IN)).status_code == 404
    answer = await client.get("/mgr/pb/openapi.json", headers=SIGNED_IN)
    assert answer.status_code == 404
    assert answer.json()["error"] == "not_found"


async def test_the_docs_page_without_a_session_redirects_to_the_login_page(client):
    answer = await client.get("/mgr/pb/docs?ctx=mgr")
    assert answer.status_code in (302, 303)
    assert answer.headers["location"].startswith(f"{LOGIN}?next=")
    assert "%2Fmgr%2Fpb%2Fdocs" in answer.headers["location"]


async def test_the_docs_page_without_a_session_answers_401_when_the_host_has_no_login_page(sqlite_database):
    async with await admin_host(sqlite_database, login_url=None) as client:
        answer = await client.get("/mgr/pb/docs?ctx=mgr")
    assert answer.status_code == 401


async def test_the_specification_without_a_session_is_a_401_json_answer(client):
    answer = await client.get("/mgr/pb/openapi.json?ctx=mgr")
    assert answer.status_code == 401
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"] == "unauthorized"


async def test_the_docs_page_names_the_specification_and_the_viewer_and_explains_a_failure(client):
    answer = await client.get("/mgr/pb/docs?ctx=mgr", headers=SIGNED_IN)
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    page = answer.text
    assert "http://testserver/mgr/pb/openapi.json?ctx=mgr" in page
    assert f"{SWAGGER_UI_CDN}/swagger-ui-bundle.js" not in page  # the script adds the files after load
    assert SWAGGER_UI_CDN in page
    assert 'id="viewer-fallback"' in page and "could not be loaded" in page
    assert "<noscript>" in page


async def test_the_fallback_says_how_to_serve_the_viewer_from_the_site(client):
    page = (await client.get("/mgr/pb/docs?ctx=mgr", headers=SIGNED_IN)).text
    assert "pip install &#39;pb_headless[viewer]&#39;" in page and "local_viewer=True" in page


async def test_with_the_viewer_extra_installed_the_site_serves_swagger_ui_itself(sqlite_database):
    async with await admin_host(sqlite_database, local_viewer=None) as client:
        page = (await client.get("/mgr/pb/docs?ctx=mgr", headers=SIGNED_IN)).text
        script = await client.get("/mgr/pb/viewer/swagger-ui-bundle.js")
        css = await client.get("/mgr/pb/viewer/swagger-ui.css")
    assert '"viewerUrl": "/mgr/pb/viewer"' in page
    assert SWAGGER_UI_CDN not in page and 'id="viewer-remedy"' not in page
    assert script.status_code == 200 and "SwaggerUIBundle" in script.text
    assert 'PACKAGE_VERSION:"5.' in script.text  # swagger-ui 5: the first to read OpenAPI 3.1
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


def test_without_the_extra_the_page_uses_the_cdn_and_names_the_one_command(monkeypatch):
    monkeypatch.setattr(viewer, "installed_files", lambda: None)
    chosen = viewer.Viewer.choose(None, None)
    assert (chosen.address("/mgr/pb"), chosen.files) == (SWAGGER_UI_CDN, None)
    remedy = "run pip install 'pb_headless[viewer]' in the site's environment and restart the site"
    assert chosen.remedy() == remedy
    with pytest.raises(ImportError, match=r"pb_headless\[viewer\]"):
        viewer.Viewer.choose(None, True)


async def test_the_viewer_address_can_point_at_files_served_elsewhere(sqlite_database):
    async with await admin_host(sqlite_database, viewer_url="http://127.0.0.1:9/swagger/") as client:
        page = (await client.get("/mgr/pb/docs?ctx=mgr", headers=SIGNED_IN)).text
    assert '"viewerUrl": "http://127.0.0.1:9/swagger"' in page


async def test_the_specification_is_the_full_document_with_the_api_on_this_host(client):
    answer = await client.get("/mgr/pb/openapi.json?ctx=mgr", headers=SIGNED_IN)
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    document = answer.json()
    validate(document)
    assert document["servers"] == [{"url": "http://testserver/api/pb/v1"}]
    assert {"/objects/articles", "/objects/articles/{id}", "/objects/authors", "/reports/summary"} <= set(
        document["paths"]
    )
    assert set(document["paths"]["/objects/articles/{id}"]) == {"get", "patch", "delete"}
    # The site owner's docs page shows the batch endpoint as a writing token's document does.
    assert set(document["paths"]["/batch"]) == {"post"}


async def test_the_specification_takes_forwarded_scheme_and_host_only_from_a_trusted_proxy(sqlite_database):
    await create_demo(sqlite_database)
    forwarded = {**SIGNED_IN, "x-forwarded-proto": "https", "x-forwarded-host": "site.example.org"}
    async with await admin_host(sqlite_database) as client:
        untrusted = (await client.get("/mgr/pb/openapi.json?ctx=mgr", headers=forwarded)).json()
    async with await admin_host(sqlite_database, trusted=("203.0.113.7",)) as client:
        trusted = (await client.get("/mgr/pb/openapi.json?ctx=mgr", headers=forwarded)).json()
        page = (await client.get("/mgr/pb/docs?ctx=mgr", headers=forwarded)).text
    assert untrusted["servers"] == [{"url": "http://testserver/api/pb/v1"}]
    assert trusted["servers"] == [{"url": "https://site.example.org/api/pb/v1"}]
    assert "https://site.example.org/mgr/pb/openapi.json?ctx=mgr" in page


async def test_the_administration_endpoints_never_carry_cors_headers(sqlite_database):
    await create_demo(sqlite_database)
    async with await admin_host(sqlite_database) as client:
        from pb_headless import SettingsStore

        await SettingsStore(sqlite_database).set("service_cors_origins", "*")
        await SettingsStore(sqlite_database).set("service_cors_paths", "*")
        answer = await client.get(
            "/mgr/pb/openapi.json?ctx=mgr", headers={**SIGNED_IN, "origin": "https://a.test"}
        )
    assert answer.status_code == 200
    assert not [name for name in answer.headers if name.lower().startswith("access-control-")]


async def test_full_document_lists_everything_for_the_console_command(sqlite_database):
    await create_demo(sqlite_database)
    api = HeadlessAPI(sqlite_database, demo_registry(), routes=[report_summary])
    await api.startup()
    document = full_document(api, "https://api.example.org/api/pb/v1")
    orjson.dumps(document)  # plain keys everywhere: any JSON encoder can print it
    validate(document)
    assert document["servers"] == [{"url": "https://api.example.org/api/pb/v1"}]
    assert "/reports/summary" in document["paths"]
    assert set(document["paths"]["/objects/articles"]) == {"get", "post"}


async def test_full_document_asks_for_a_compiled_registry_first(sqlite_database):
    api = HeadlessAPI(sqlite_database, demo_registry())
    with pytest.raises(RuntimeError, match="startup"):
        full_document(api, "http://localhost/api/pb/v1")
