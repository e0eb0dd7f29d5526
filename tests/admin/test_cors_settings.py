"""The CORS settings page of pb_headless.admin: the `service_cors_*` keys, saved and served at once."""

from __future__ import annotations

from pb_headless.tables import DEFAULT_SETTINGS

ORIGIN = "https://app.example.com"
PAGE = "/mgr/pb/settings/cors"


def form(**changes: str) -> dict[str, str]:
    values = {key: value for key, value in DEFAULT_SETTINGS.items() if key != "service_cors_credentials"}
    values.update(changes)
    return values


async def test_the_page_shows_the_installed_defaults_and_that_cors_is_off(sqlite_browser):
    page = await sqlite_browser.get(PAGE)
    assert page.status_code == 200
    assert 'value="api/*"' in page.text and 'value="86400"' in page.text
    assert "No origin is set" in page.text


async def test_saved_origins_are_served_by_the_api_on_the_next_request(browser):
    plain = await browser.create_token("spa", "articles.read")
    before = await browser.api("/objects/articles", plain, headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in before.headers
    answer = await browser.submit(
        PAGE,
        form(service_cors_origins=f"{ORIGIN}, https://*.example.org", service_cors_max_age="600"),
        form_page=PAGE,
    )
    assert answer.status_code == 303
    after = await browser.api("/objects/articles", plain, headers={"Origin": ORIGIN})
    assert after.headers["access-control-allow-origin"] == ORIGIN
    preflight = await browser.client.options(
        "/api/pb/v1/objects/articles",
        headers={"Origin": "https://shop.example.org", "Access-Control-Request-Method": "GET"},
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-max-age"] == "600"
    assert (await browser.site.api.settings.get("service_cors_origins")) == f"{ORIGIN},https://*.example.org"


async def test_any_origin_with_credentials_is_saved_with_the_policy_warning(sqlite_browser):
    browser = sqlite_browser
    await browser.submit(PAGE, form(service_cors_origins="*", service_cors_credentials="yes"), form_page=PAGE)
    page = await browser.get(PAGE)
    assert "browsers refuse credentials with &#39;*&#39;" in page.text
    assert await browser.site.api.settings.get("service_cors_credentials") == "yes"
    await browser.submit(PAGE, form(service_cors_origins="*"), form_page=PAGE)
    assert await browser.site.api.settings.get("service_cors_credentials") == "no"
    assert "refuse credentials" not in (await browser.get(PAGE)).text


async def test_an_invalid_value_is_shown_on_the_form_and_nothing_is_saved(sqlite_browser):
    browser = sqlite_browser
    for changes, message in (
        ({"service_cors_origins": "example.com"}, "is not an origin"),
        ({"service_cors_origins": "https://a.example/path"}, "is not an origin"),
        ({"service_cors_max_age": "a day"}, "whole number of seconds"),
        ({"service_cors_methods": "GET, PO ST"}, "not a valid HTTP method"),
    ):
        page = await browser.submit(PAGE, form(**changes), form_page=PAGE)
        assert page.status_code == 422
        assert message in page.text
    assert await browser.site.api.settings.all() == DEFAULT_SETTINGS


async def test_the_settings_page_refuses_a_post_without_the_csrf_token(sqlite_browser):
    answer = await sqlite_browser.client.post(PAGE, data=form(service_cors_origins="*"))
    assert answer.status_code == 403
    assert await sqlite_browser.site.api.settings.get("service_cors_origins") == ""
