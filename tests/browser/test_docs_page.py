"""The docs page in a real browser: the explanation when the viewer cannot load, and a try-it request."""

from __future__ import annotations

import time

import pytest

from pb_headless.admin.viewer import SWAGGER_UI_CDN
from tests.browser.conftest import ADMIN

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CDN = "https://cdn.jsdelivr.net/**"
FALLBACK_WITHIN_MS = 5000  # the page promises "a few seconds": 3 s after it has loaded


def sign_in_to_docs(page, site) -> None:
    """Open the docs page; the host sends the browser to its login form and back again."""
    page.goto(f"{site.url}/mgr/pb/docs?ctx=mgr")
    assert "/mgr/login" in page.url
    page.fill("#username", ADMIN[0])
    page.fill("#password", ADMIN[1])
    page.click("button[type=submit]")
    page.wait_for_url(f"{site.url}/mgr/pb/docs?ctx=mgr")


def assert_fallback_names_the_specification(page, site) -> None:
    fallback = page.locator("#viewer-fallback")
    fallback.wait_for(state="visible", timeout=FALLBACK_WITHIN_MS)
    address = f"{site.url}/mgr/pb/openapi.json?ctx=mgr"
    assert "could not be loaded" in fallback.inner_text()
    assert address in fallback.inner_text()
    assert page.locator("#spec-address").get_attribute("href") == address
    download = page.locator("#spec-download")
    assert download.get_attribute("href") == address and download.get_attribute("download") == "openapi.json"
    assert f"{site.url}/api/pb/v1/openapi.json" in fallback.inner_text()  # what tools read with a token
    assert page.locator("header.pb-shell button:has-text('Sign out')").is_visible()  # the one shell
    assert "pip install 'pb_headless[viewer]'" in page.locator("#viewer-remedy").inner_text()


def test_with_the_viewer_extra_the_docs_page_renders_swagger_ui_with_no_network(start_site, browser):
    site = start_site()  # the `viewer` extra is installed (dev): the site serves Swagger UI's files
    page = browser.new_page()
    elsewhere: list[str] = []

    def offline(route) -> None:
        if route.request.url.startswith(site.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", offline)
    sign_in_to_docs(page, site)
    page.wait_for_selector(".swagger-ui .info .title", timeout=20000)
    assert page.locator("#viewer-fallback").is_hidden()
    assert page.locator("#operations-articles-list_articles").is_visible()
    assert elsewhere == []  # nothing was even asked of another host


def test_the_docs_page_explains_and_gives_the_specification_address_when_the_cdn_is_unreachable(
    start_site, browser
):
    site = start_site(viewer_url=SWAGGER_UI_CDN)  # the CDN, as a site without the `viewer` extra
    page = browser.new_page()
    page.route(CDN, lambda route: route.abort("internetdisconnected"))
    sign_in_to_docs(page, site)
    assert_fallback_names_the_specification(page, site)
    page.goto(f"{site.url}/mgr/pb/openapi.json?ctx=mgr")  # the address it gives works, with the session
    assert '"openapi":"3.1.0"' in page.content().replace(" ", "")


def test_the_docs_page_explains_within_seconds_when_the_cdn_never_answers(start_site, browser):
    site = start_site(viewer_url=SWAGGER_UI_CDN)
    page = browser.new_page()
    page.route(CDN, lambda route: None)  # the request hangs: neither answered nor refused
    sign_in_to_docs(page, site)
    started = time.monotonic()
    assert_fallback_names_the_specification(page, site)
    assert time.monotonic() - started < FALLBACK_WITHIN_MS / 1000


def test_with_the_viewer_files_served_locally_authorize_and_try_it_get_a_200(
    start_site, browser, viewer_server
):
    site = start_site(viewer_url=viewer_server)
    token = site.token("*")
    page = browser.new_page()
    sign_in_to_docs(page, site)
    page.wait_for_selector(".swagger-ui .info", timeout=20000)
    assert page.locator("#viewer-fallback").is_hidden()

    page.click(".swagger-ui .auth-wrapper button.authorize")
    dialog = page.locator(".dialog-ux")
    dialog.locator("input").first.fill(token)  # the first scheme: Authorization: Bearer
    dialog.locator("button.authorize").first.click()
    dialog.locator("button.btn-done").first.click()

    operation = page.locator("#operations-articles-list_articles")
    operation.locator(".opblock-summary").click()
    operation.locator("button.execute").wait_for(timeout=5000)  # the page opens operations in try-it mode
    with page.expect_response(lambda answer: "/api/pb/v1/objects/articles" in answer.url) as answered:
        operation.locator("button.execute").click()
    answer = answered.value
    assert answer.status == 200
    assert answer.request.headers.get("authorization") == f"Bearer {token}"
    assert answer.json()["data"], "the demo site's articles"
    shown = operation.locator(".live-responses-table tbody .response-col_status").first
    assert shown.inner_text().strip() == "200"
