"""The API tokens section of pb_headless.admin (docs/authentication.md), through the example site."""

from __future__ import annotations

import sqlalchemy as sa

from pb_headless.tables import tokens as tokens_table
from tests.site.harness import token_value


async def token_rows(browser):
    return [dict(row._mapping) for row in await browser.site.database.fetch_all(tokens_table.select())]


async def test_a_new_token_is_shown_once_and_works_against_the_api(browser):
    page = await browser.revealed(
        await browser.submit("/mgr/pb/tokens", {"name": "mobile", "scopes": "articles.read"})
    )
    assert page.headers["cache-control"] == "no-store"
    plain = token_value(page)
    assert plain.startswith("pb_")
    listing = await browser.get("/mgr/pb/tokens")
    assert "mobile" in listing.text and plain[:8] in listing.text
    assert plain not in listing.text
    answer = await browser.api("/objects/articles", plain)
    assert answer.status_code == 200
    assert answer.json()["meta"]["total"] == 4


async def test_the_token_list_shows_scopes_expiry_acting_user_state_and_last_use(sqlite_browser):
    browser = sqlite_browser
    plain = await browser.create_token(
        "reporting", "articles.read, authors.read", expires_at="2099-01-31T10:00", user_id=browser.admin_id
    )
    await browser.api("/me", plain)
    listing = (await browser.get("/mgr/pb/tokens")).text
    row = listing[listing.index("reporting") : listing.index("</tr>", listing.index("reporting"))]
    assert "articles.read" in row and "authors.read" in row
    assert "2099-01-31 10:00 UTC" in row
    assert f"admin (#{browser.admin_id})" in row
    assert "enabled" in row
    assert "never" not in row  # it was used, so "last used" shows a time


async def test_reissue_shows_a_new_value_and_the_old_one_stops_working_at_once(browser):
    old = await browser.create_token("app", "articles.read")
    assert (await browser.api("/objects/articles", old)).status_code == 200
    page = await browser.revealed(
        await browser.submit("/mgr/pb/tokens/action", {"name": "app", "action": "reissue"})
    )
    new = token_value(page)
    assert new != old
    assert (await browser.api("/objects/articles", old)).status_code == 401
    assert (await browser.api("/objects/articles", new)).status_code == 200


async def test_a_disabled_token_answers_401_until_it_is_enabled_again(browser):
    plain = await browser.create_token("app", "articles.read")
    answer = await browser.submit("/mgr/pb/tokens/action", {"name": "app", "action": "disable"})
    assert answer.status_code == 303
    assert (await browser.api("/objects/articles", plain)).status_code == 401
    assert "disabled" in (await browser.get("/mgr/pb/tokens")).text
    await browser.submit("/mgr/pb/tokens/action", {"name": "app", "action": "enable"})
    assert (await browser.api("/objects/articles", plain)).status_code == 200


async def test_a_deleted_token_is_gone_and_answers_401(sqlite_browser):
    browser = sqlite_browser
    plain = await browser.create_token("app", "articles.read")
    await browser.create_token("keeper", "authors.read")  # keeps the API from going dormant
    await browser.submit("/mgr/pb/tokens/action", {"name": "app", "action": "delete"})
    assert [row["name"] for row in await token_rows(browser)] == ["keeper"]
    assert (await browser.api("/objects/articles", plain)).status_code == 401


async def test_editing_scopes_expiry_and_acting_user_takes_effect_on_the_next_request(browser):
    plain = await browser.create_token("app", "authors.read")
    assert (await browser.api("/objects/articles", plain)).status_code == 404
    answer = await browser.submit(
        "/mgr/pb/tokens/edit?name=app",
        {
            "scopes": "articles.read authors.read",
            "expires_at": "2099-06-01T00:00",
            "user_id": browser.admin_id,
        },
    )
    assert answer.status_code == 303
    me = (await browser.api("/me", plain)).json()["data"]
    assert me["scopes"] == ["articles.read", "authors.read"]
    assert me["expires_at"].startswith("2099-06-01T00:00:00")
    assert me["user"] == {"id": browser.admin_id, "username": "admin"}
    await browser.submit(
        "/mgr/pb/tokens/edit?name=app", {"scopes": "articles.read", "expires_at": "", "user_id": ""}
    )
    me = (await browser.api("/me", plain)).json()["data"]
    assert me["expires_at"] is None and me["user"] is None


async def test_a_token_whose_acting_user_is_blocked_answers_401(browser):
    plain = await browser.create_token("app", "articles.read", user_id=browser.admin_id)
    other = await browser.site.users.create("editor", "another password")
    await browser.submit("/mgr/pb/tokens/edit?name=app", {"scopes": "articles.read", "user_id": other["id"]})
    assert (await browser.api("/objects/articles", plain)).status_code == 200
    await browser.site.users.set_blocked(other["id"], True)
    assert (await browser.api("/objects/articles", plain)).status_code == 401


async def test_a_refused_token_form_shows_why_and_saves_nothing(sqlite_browser):
    browser = sqlite_browser
    cases = [
        ({"name": "bad", "scopes": "Articles.Read"}, "is not a scope"),
        ({"name": "bad", "scopes": ""}, "at least one scope"),
        ({"name": "bad", "scopes": "articles.read", "expires_at": "2001-01-01T00:00"}, "in the past"),
        ({"name": "bad", "scopes": "articles.read", "user_id": "999"}, "no active administration user"),
        ({"name": "", "scopes": "articles.read"}, "needs a name"),
    ]
    for fields, message in cases:
        page = await browser.submit("/mgr/pb/tokens", fields)
        assert page.status_code == 422, fields
        assert message in page.text
        assert 'id="token-value"' not in page.text
    assert await token_rows(browser) == []


async def test_a_second_token_with_the_same_name_is_refused(sqlite_browser):
    browser = sqlite_browser
    await browser.create_token("app", "articles.read")
    page = await browser.submit("/mgr/pb/tokens", {"name": "app", "scopes": "authors.read"})
    assert page.status_code == 422 and "already exists" in page.text
    assert [row["scopes"] for row in await token_rows(browser)] == ['["articles.read"]']


async def test_a_refused_edit_keeps_the_token_as_it_was(sqlite_browser):
    browser = sqlite_browser
    await browser.create_token("app", "articles.read")
    page = await browser.submit("/mgr/pb/tokens/edit?name=app", {"scopes": "no good", "expires_at": ""})
    assert page.status_code == 422 and "&#39;no&#39;, &#39;good&#39;: these are not scopes" in page.text
    assert [row["scopes"] for row in await token_rows(browser)] == ['["articles.read"]']


async def test_a_post_without_the_csrf_token_is_refused_with_403_and_changes_nothing(sqlite_browser):
    browser = sqlite_browser
    plain = await browser.create_token("app", "articles.read")
    answer = await browser.client.post("/mgr/pb/tokens", data={"name": "sneaky", "scopes": "*"})
    assert answer.status_code == 403
    for data in (
        {"name": "app", "action": "disable"},
        {"name": "app", "action": "disable", "csrf_token": "x"},
    ):
        answer = await browser.client.post("/mgr/pb/tokens/action", data=data)
        assert answer.status_code == 403
    assert [row["name"] for row in await token_rows(browser)] == ["app"]
    assert (await browser.api("/objects/articles", plain)).status_code == 200


async def test_the_admin_pages_send_a_request_without_a_session_to_the_login_page(sqlite_browser):
    browser = sqlite_browser
    await browser.client.post("/mgr/logout", data={"csrf_token": await browser.csrf("/mgr/")})
    for method, path in (
        ("GET", "/mgr/pb/tokens"),
        ("GET", "/mgr/pb/settings/cors"),
        ("POST", "/mgr/pb/tokens"),
        ("GET", "/mgr/pb/tables"),
    ):
        answer = await browser.client.request(
            method, path, data={"name": "x", "scopes": "*"} if method == "POST" else None
        )
        assert answer.status_code == 303, path
        assert answer.headers["location"].startswith("/mgr/login?next=%2Fmgr%2Fpb%2F")
    assert await token_rows(browser) == []


async def test_the_admin_pages_never_get_cors_headers(sqlite_browser):
    browser = sqlite_browser
    await browser.site.api.settings.set("service_cors_origins", "*")
    await browser.site.api.settings.set("service_cors_paths", "*")
    await browser.create_token("app", "articles.read")
    for path in ("/mgr/pb/tokens", "/mgr/", "/mgr/pb/settings/cors"):
        answer = await browser.get(path, headers={"Origin": "https://evil.example"})
        assert not [name for name in answer.headers if name.lower().startswith("access-control-")], path
    preflight = await browser.client.options(
        "/mgr/pb/tokens", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert not [name for name in preflight.headers if name.lower().startswith("access-control-")]


async def test_the_token_table_holds_no_plain_value(browser):
    plain = await browser.create_token("app", "articles.read")
    stored = await browser.site.database.fetch_all(sa.select(tokens_table))
    assert plain not in repr([tuple(row) for row in stored])
