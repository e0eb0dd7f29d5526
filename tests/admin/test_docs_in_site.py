"""The documentation endpoints (docs/admin.md) as the example site mounts them, at /mgr/pb."""

from __future__ import annotations

from tests.site.harness import open_site


async def test_a_signed_in_admin_reads_the_docs_page_and_the_full_specification(sqlite_browser):
    page = await sqlite_browser.get("/mgr/pb/docs?ctx=mgr")
    assert page.status_code == 200
    assert "/mgr/pb/openapi.json?ctx=mgr" in page.text
    spec = await sqlite_browser.get("/mgr/pb/openapi.json?ctx=mgr")
    assert spec.status_code == 200
    document = spec.json()
    assert document["servers"][0]["url"] == "http://testserver/api/pb/v1"
    assert any(path.startswith("/objects/articles") for path in document["paths"])
    assert any(path.startswith("/reports/categories") for path in document["paths"])


async def test_without_ctx_the_docs_addresses_are_not_found(sqlite_browser):
    assert (await sqlite_browser.get("/mgr/pb/docs")).status_code == 404
    assert (await sqlite_browser.get("/mgr/pb/openapi.json")).status_code == 404


async def test_without_a_session_the_page_redirects_to_login_and_the_specification_is_401(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        page = await browser.get("/mgr/pb/docs?ctx=mgr")
        spec = await browser.get("/mgr/pb/openapi.json?ctx=mgr")
    assert page.status_code == 303
    assert page.headers["location"] == "/mgr/login?next=%2Fmgr%2Fpb%2Fdocs%3Fctx%3Dmgr"
    assert spec.status_code == 401 and spec.json()["error"] == "unauthorized"


async def test_the_viewer_address_comes_from_pb_docs_viewer_url(sqlite_database):
    async with open_site(
        str(sqlite_database.url), docs_viewer_url="https://cdn.example/swagger-ui"
    ) as browser:
        page = await browser.get("/mgr/pb/docs?ctx=mgr")
    assert "<code>https://cdn.example/swagger-ui</code>" in page.text
