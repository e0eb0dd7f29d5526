"""The webhooks section in Chromium, at 1280 and 390 px: create, the secret once, the list, the log."""

from __future__ import annotations

import pytest

from tests.browser.site_tour import OBJECT, create_webhook, make_table, overflow, publish, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]
URL = "https://hooks.example.com/pb/deliveries/a-rather-long-path-for-the-search-indexer-of-production"


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, {"width": 390, "height": 844}])
def test_a_webhook_is_made_its_secret_copied_once_and_managed_from_the_list(start_site, browser, viewport):
    site = start_site()
    context = browser.new_context(viewport=viewport)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    page = context.new_page()
    sign_in(page, site.url)
    make_table(page, site.url)
    publish(page, site.url)

    secret = create_webhook(page, site.url, "search indexer", URL, objects=(OBJECT,))
    assert secret.startswith("whsec_") and overflow(page) == 0
    page.click("button[data-copy]")
    page.locator("#copy-status:has-text('Copied')").wait_for(timeout=5000)
    assert page.evaluate("navigator.clipboard.readText()") == secret
    page.reload()
    assert "was already shown" in page.inner_text("main") and secret not in page.content()

    page.goto(f"{site.url}/mgr/pb/webhooks")
    row = page.locator("table.list tbody tr")
    assert row.count() == 1 and "search indexer" in row.inner_text() and OBJECT in row.inner_text()
    assert secret not in page.content() and overflow(page) == 0
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button[value=disable]")
    assert "disabled" in page.locator("td[data-label=State]").inner_text()
    page.click("td.actions a:has-text('Deliveries')")
    page.wait_for_url(f"{site.url}/mgr/pb/webhooks/deliveries?**")
    assert "Nothing delivered yet" in page.inner_text("main") and overflow(page) == 0
    context.close()
