"""Chromium screenshots of the webhook section and the API tab at 1280 and 390 px: no token, scope or
object name broken inside itself, each token's state on the API tab, a failing webhook shown failing.

The screenshots are written to $PB_SCREENSHOTS when it is set (else the test's own folder) as
`<page>-<width>.png`; the checks below read the same pages through the DOM.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from datetime import timedelta
from pathlib import Path

import pytest

from tests.browser.site_tour import (
    OBJECT,
    TABLE,
    create_token,
    create_webhook,
    make_table,
    overflow,
    publish,
    sign_in,
    split_names,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = {1280: 800, 390: 844}
SCOPES = ["articles.read", "authors.read", f"{OBJECT}.read", f"{OBJECT}.write"]
FAILING_URL = "http://127.0.0.1:9/pb/hook"  # a loopback address: refused while private ones are


def _expire(database_url: str, name: str) -> None:
    """Move a token's expiry into the past (an expiry in the past cannot be set through the form)."""
    import sqlalchemy as sa
    from databases import Database

    from pb_headless.database.dialect import utcnow
    from pb_headless.tables import tokens

    async def expire() -> None:
        async with Database(database_url) as database:
            past = utcnow() - timedelta(hours=1)
            await database.execute(sa.update(tokens).where(tokens.c.name == name).values(expires_at=past))

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's loop runs in this thread
        pool.submit(asyncio.run, expire()).result(timeout=60)


def _fill(page, url: str, database_url: str) -> None:
    make_table(page, url)
    publish(page, url)
    create_token(page, url, "mobile app production", SCOPES)
    create_token(page, url, "stopped integration", ["articles.read"])
    create_token(page, url, "lapsed partner feed", ["articles.read"])
    page.goto(f"{url}/mgr/pb/tokens")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("tr:has-text('stopped integration') button[value=disable]")
    _expire(database_url, "lapsed partner feed")
    create_webhook(page, url, "search indexer", FAILING_URL, objects=(OBJECT,))
    page.goto(f"{url}/mgr/pb/webhooks")
    page.click("button:has-text('Send test event')")
    page.wait_for_url(f"{url}/mgr/pb/webhooks/deliveries?**")


def test_names_stay_whole_and_states_show_on_the_webhook_section_and_the_api_tab(
    start_site, browser, tmp_path
):
    site = start_site()
    shots = Path(os.environ.get("PB_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    pages = {
        "webhooks": "/mgr/pb/webhooks",
        "webhook-deliveries": "/mgr/pb/webhooks/deliveries?name=search%20indexer",
        "webhook-edit": "/mgr/pb/webhooks/edit?name=search%20indexer",
        "api-tab": f"/mgr/pb/tables/{TABLE}/api",
        "tokens": "/mgr/pb/tokens",
    }
    for number, (width, height) in enumerate(WIDTHS.items()):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        sign_in(page, site.url)
        if number == 0:
            _fill(page, site.url, site.database_url)
            assert "Test event novosti_kompanii.test failed" in page.inner_text("main")
        for name, path in pages.items():
            page.goto(site.url + path)
            page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
            assert (shots / f"{name}-{width}.png").stat().st_size > 5000
            assert split_names(page) == [], f"{name} at {width} px"
            assert overflow(page) == 0, f"{name} at {width} px"
            _check_states(name, page)
        context.close()


def _check_states(name: str, page) -> None:
    main = page.inner_text("main")
    if name == "webhooks":
        cell = page.inner_text("td[data-label='Last delivery']")
        assert "failing" in cell and "127.0.0.1" in cell and "pending" not in cell
        assert page.locator("td[data-label='Last delivery'] .tag.off").count() == 1
    elif name == "webhook-deliveries":
        headers = page.inner_text("thead").lower()  # shown in capitals by the stylesheet
        assert "Last error: " in main and "created" in headers and "last try" in headers
    elif name == "api-tab":
        card = page.inner_text("#tokens")
        assert "mobile app production\nenabled" in card or "mobile app production enabled" in card
        for token, state in (("stopped integration", "disabled"), ("lapsed partner feed", "expired")):
            item = page.locator("#tokens li", has_text=token)
            assert item.locator(".tag.off").inner_text() == state
            assert item.locator("button:has-text('Add')").count() == 1
            assert "answers 401" in item.inner_text()
