"""The administration login under attack: a growing lock, one check per attempt, sessions that end."""

from __future__ import annotations

import re
import threading
from datetime import timedelta

import httpx
import sqlalchemy as sa

from examples.site import passwords
from examples.site.app import create_site
from examples.site.logins import USER_THRESHOLD
from examples.site.schema import admin_sessions, login_failures
from tests.site.commands import run_site, site_env
from tests.site.harness import BASE_URL, PASSWORD, Browser, open_site, site_config


async def age_failures(database, by: timedelta) -> None:
    """Move every recorded failure back in time, as if `by` had passed."""
    for row in await database.fetch_all(sa.select(login_failures)):
        key, at = row._mapping["key"], row._mapping["last_failure_at"]
        await database.execute(
            login_failures.update().where(login_failures.c.key == key).values(last_failure_at=at - by)
        )


async def test_a_session_cookie_copied_before_logout_is_refused_afterwards(sqlite_database):
    async with open_site(str(sqlite_database.url)) as browser:
        captured = dict(browser.client.cookies)
        assert (await browser.get("/mgr/")).status_code == 200
        await browser.client.post("/mgr/logout", data={"csrf_token": await browser.csrf("/mgr/")})
        browser.client.cookies.clear()
        browser.client.cookies.update(captured)  # the old cookie, replayed
        assert (await browser.get("/mgr/")).status_code == 303
        assert (await browser.get("/mgr/pb/tokens")).status_code == 303
        assert await browser.site.database.fetch_all(sa.select(admin_sessions)) == []


async def test_repeated_failures_lock_the_user_even_for_the_right_password(database):
    async with open_site(str(database.url), logged_in=False) as browser:
        for _ in range(USER_THRESHOLD):
            assert (await browser.login(password="wrong password")).status_code == 400
        locked = await browser.login()
        assert locked.status_code == 429
        assert "Too many failed sign-ins. Try again in 30 seconds." in locked.text
        assert (await browser.get("/mgr/")).status_code == 303
        rows = {
            row._mapping["key"]: row._mapping["failures"]
            for row in await browser.site.database.fetch_all(sa.select(login_failures))
        }
        assert rows == {"user:admin": USER_THRESHOLD, "address:203.0.113.9": USER_THRESHOLD}


async def test_every_instance_sees_the_same_lock_and_it_grows_then_lapses(database):
    async with open_site(str(database.url), logged_in=False) as browser:
        for _ in range(USER_THRESHOLD):
            await browser.login(password="wrong password")
        await age_failures(browser.site.database, timedelta(seconds=31))
        assert (await browser.login(password="wrong password")).status_code == 400  # the 30 s lock lapsed
        second = create_site(site_config(str(database.url)))  # another instance, same database
        async with second.running():
            transport = httpx.ASGITransport(app=second.app, client=("198.51.100.7", 40000))
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                elsewhere = Browser(client, second)
                answer = await elsewhere.login()
                assert answer.status_code == 429
                # doubled to 60 s (MariaDB keeps whole seconds, so a second may already be gone)
                assert re.search(r"Try again in (59|60) seconds", answer.text)
                await age_failures(second.database, timedelta(minutes=2))
                assert (await elsewhere.login()).status_code == 303  # the lock lapsed
                assert [
                    row._mapping["key"] for row in await second.database.fetch_all(sa.select(login_failures))
                ] == ["address:203.0.113.9"]  # a success clears the user's count, not the other address's


async def test_many_failures_from_one_address_lock_that_address_only(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        for number in range(20):
            await browser.login(username=f"guess{number}", password="wrong password")
        assert (await browser.login()).status_code == 429  # a user never tried from here, same address
        transport = httpx.ASGITransport(app=browser.site.app, client=("198.51.100.8", 40000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            assert (await Browser(client, browser.site).login()).status_code == 303


async def test_an_unknown_user_costs_one_password_check_like_a_wrong_password_in_a_worker_thread(
    sqlite_database, monkeypatch
):
    checks: list[int] = []
    real = passwords.verify_password

    def counting(password: str, stored: str) -> bool:
        checks.append(threading.get_ident())
        return real(password, stored)

    monkeypatch.setattr(passwords, "verify_password", counting)
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        loop_thread = threading.get_ident()
        for username, password in (
            ("nobody", "whatever pw"),
            ("admin", "wrong password"),
            ("admin", PASSWORD),
        ):
            checks.clear()
            await browser.login(username=username, password=password)
            assert len(checks) == 1, username
            assert checks[0] != loop_thread  # never on the event loop's thread


async def test_admin_password_resets_the_password_and_ends_the_users_sessions(tmp_path):
    database = tmp_path / "site.db"
    env = site_env(database=database)
    assert run_site("init", env=env).returncode == 0
    assert run_site("admin", "create", "--username", "admin", "--password", PASSWORD, env=env).returncode == 0
    async with open_site(f"sqlite:///{database}") as browser:
        assert (await browser.get("/mgr/")).status_code == 200
        done = run_site("admin", "password", "--username", "admin", env=env)
        assert done.returncode == 0, done.stderr
        new_password = done.stdout.strip().splitlines()[-1].split(": ", 1)[1]
        assert (await browser.get("/mgr/")).status_code == 303  # the open session ended
        assert (await browser.login()).status_code == 400
        assert (await browser.login(password=new_password)).status_code == 303
        chosen = run_site("admin", "password", "--username", "admin", "--password", "a chosen one", env=env)
        assert chosen.returncode == 0 and "a chosen one" not in chosen.stdout
        assert (await browser.login(password="a chosen one")).status_code == 303
    refused = run_site("admin", "password", "--username", "nobody", "--password", "long enough", env=env)
    assert refused.returncode == 1
    assert refused.stderr.strip() == "examples.site: error: there is no administration user named 'nobody'"
    short = run_site("admin", "password", "--username", "admin", "--password", "short", env=env)
    assert short.returncode == 1 and "at least 8 characters" in short.stderr
