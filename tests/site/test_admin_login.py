"""The site's administration area: session login at /mgr/login, logout, and the guard of every /mgr page."""

from __future__ import annotations

from tests.site.harness import PASSWORD, open_site


async def test_the_administration_area_sends_a_visitor_to_the_login_page(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        for path in ("/mgr/", "/mgr/constructor", "/mgr/pb/tokens"):
            answer = await browser.get(path)
            assert answer.status_code == 303, path
            assert answer.headers["location"].startswith("/mgr/login?next=")
        docs = await browser.get("/mgr/pb/docs?ctx=mgr")
        assert docs.status_code == 303


async def test_a_wrong_password_does_not_sign_in(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        answer = await browser.login(password="not the password")
        assert answer.status_code == 400
        assert "Wrong username or password" in answer.text
        assert (await browser.get("/mgr/")).status_code == 303
        assert (await browser.login(username="nobody")).status_code == 400


async def test_the_right_password_opens_the_dashboard_and_logout_closes_it(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        answer = await browser.login()
        assert answer.status_code == 303 and answer.headers["location"] == "/mgr/"
        dashboard = await browser.get("/mgr/")
        assert dashboard.status_code == 200
        for link in ("/mgr/pb/tokens", "/mgr/constructor", "/mgr/pb/settings/cors", "/mgr/pb/docs?ctx=mgr"):
            assert f'href="{link}"' in dashboard.text
        assert (await browser.client.post("/mgr/logout")).status_code == 403  # no CSRF token: still signed in
        assert (await browser.get("/mgr/")).status_code == 200
        await browser.client.post("/mgr/logout", data={"csrf_token": await browser.csrf("/mgr/")})
        assert (await browser.get("/mgr/")).status_code == 303


async def test_a_login_without_the_csrf_token_is_refused(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        answer = await browser.client.post("/mgr/login", data={"username": "admin", "password": PASSWORD})
        assert answer.status_code == 403
        assert (await browser.get("/mgr/")).status_code == 303


async def test_a_blocked_user_cannot_sign_in_and_loses_an_open_session(sqlite_database):
    async with open_site(str(sqlite_database.url)) as browser:
        await browser.site.users.set_blocked(browser.admin_id, True)
        assert (await browser.get("/mgr/")).status_code == 303
        assert (await browser.login()).status_code == 400


async def test_after_login_the_user_returns_to_the_page_asked_for_but_never_off_site(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        token = await browser.csrf("/mgr/login")
        back = await browser.client.post(
            "/mgr/login",
            data={"username": "admin", "password": PASSWORD, "csrf_token": token, "next": "/mgr/pb/tokens"},
        )
        assert back.headers["location"] == "/mgr/pb/tokens"
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        token = await browser.csrf("/mgr/login")
        away = await browser.client.post(
            "/mgr/login",
            data={
                "username": "admin",
                "password": PASSWORD,
                "csrf_token": token,
                "next": "//evil.example/mgr/",
            },
        )
        assert away.headers["location"] == "/mgr/"
