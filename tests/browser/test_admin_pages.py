"""The administration pages in Chromium, desktop and 390 px wide: tokens, API tab, constructor, one shell."""

from __future__ import annotations

import re

import pytest

from tests.browser.site_tour import (
    OBJECT,
    PAGES,
    TABLE,
    create_token,
    make_table,
    overflow,
    populate,
    publish,
    sign_in,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PHONE = {"width": 390, "height": 844}


def token_prefixes(page, url) -> list[str]:
    page.goto(f"{url}/mgr/pb/tokens")
    return [text.strip() for text in page.locator("td[data-label=Prefix]").all_inner_texts()]


def test_a_new_token_is_copied_with_a_visible_confirmation_and_shown_only_once(start_site, browser):
    site = start_site()
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    page = context.new_page()
    sign_in(page, site.url)
    plain = create_token(page, site.url, "mobile app", ["articles.read"])
    assert plain.startswith("pb_")
    page.click("button[data-copy]")
    page.locator("#copy-status:has-text('Copied')").wait_for(timeout=5000)  # the clipboard answers async
    assert page.locator("button[data-copy]").inner_text() == "Copied ✓"
    assert page.evaluate("navigator.clipboard.readText()") == plain
    page.reload()  # a reload neither shows the value nor creates anything
    assert "was already shown" in page.inner_text("main") and plain not in page.content()
    page.go_back()  # Back lands on the list, fetched anew: no re-post, no cache miss
    assert page.url == f"{site.url}/mgr/pb/tokens"
    assert page.locator("td[data-label=Name]").all_inner_texts() == ["mobile app"]


def test_reissue_asks_first_then_reload_and_back_never_reissue_again(start_site, browser):
    site = start_site()
    page = browser.new_page()
    sign_in(page, site.url)
    create_token(page, site.url, "mobile app", ["articles.read"])
    before = token_prefixes(page, site.url)
    questions: list[str] = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.dismiss()))
    page.click("button[value=reissue]")
    assert questions and "“mobile app”" in questions[0]
    assert token_prefixes(page, site.url) == before  # dismissed: nothing happened
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button[value=reissue]")
    page.wait_for_url(f"{site.url}/mgr/pb/tokens/reveal?**")
    new_value = page.inner_text("#token-value").strip()
    after = token_prefixes(page, site.url)
    assert after != before and new_value.startswith(after[0].rstrip("…"))
    page.go_back()
    assert "was already shown" in page.inner_text("main")
    page.reload()
    assert "was already shown" in page.inner_text("main")
    page.go_back()
    assert page.url == f"{site.url}/mgr/pb/tokens"
    assert token_prefixes(page, site.url) == after  # the value just copied is still the live one


def test_disable_and_delete_ask_first_and_name_the_token(start_site, browser):
    site = start_site()
    page = browser.new_page()
    sign_in(page, site.url)
    create_token(page, site.url, "mobile app", ["articles.read"])
    page.goto(f"{site.url}/mgr/pb/tokens")
    for action, verb in (("disable", "Disable"), ("delete", "Delete")):
        asked: list[str] = []
        page.once("dialog", lambda dialog, asked=asked: (asked.append(dialog.message), dialog.accept()))
        page.click(f"button[value={action}]")
        page.wait_for_load_state()
        assert asked[0].startswith(f"{verb} the token “mobile app”"), asked
        if action == "disable":
            assert "Token “mobile app” disabled." in page.inner_text("main")
    assert "No token yet" in page.inner_text("main")


def test_scopes_are_ticked_from_published_objects_and_every_mistake_is_shown_at_once(start_site, browser):
    site = start_site()
    page = browser.new_page()
    sign_in(page, site.url)
    page.goto(f"{site.url}/mgr/pb/tokens")
    page.fill("#name", "typos")
    page.check("input[name=scope][value='authors.*']")
    page.fill("#scopes", "Articles.Read, articles")
    page.click("form.card button[type=submit]")
    error = page.inner_text("[role=alert]")
    assert "'Articles.Read', 'articles': these are not scopes" in error
    assert page.is_checked("input[name=scope][value='authors.*']")  # the ticks survive the refusal
    assert page.input_value("#name") == "typos"
    page.fill("#scopes", "artciles.read")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{site.url}/mgr/pb/tokens/reveal?**")
    assert "'artciles.read' reaches nothing published" in page.inner_text("main")


def test_the_api_tab_keeps_what_was_entered_and_refuses_a_taken_name_before_saving(start_site, browser):
    site = start_site()
    page = browser.new_page()
    sign_in(page, site.url)
    make_table(page, site.url)
    page.goto(f"{site.url}/mgr/pb/tables/{TABLE}/api")
    assert not page.is_checked("input[name=sortable][value=tekst]")  # long text: no sort by default
    assert page.is_checked("input[name=sortable][value=tsena]")
    page.check("input[name=enabled]")
    page.check("input[name=fields][value=zagolovok]")
    page.uncheck("input[name=filterable][value=tsena]")
    page.check("input[name=operations][value=create]")
    page.fill("#url_name", "articles")
    page.click("form.card button[type=submit]")
    error = page.inner_text("[role=alert]")
    assert "“articles” is already used by the declaration file (api.py)" in error
    assert "/" not in error.replace("(api.py)", "")  # never a server path
    assert page.is_checked("input[name=enabled]") and page.is_checked("input[name=fields][value=zagolovok]")
    assert not page.is_checked("input[name=filterable][value=tsena]")
    assert page.is_checked("input[name=operations][value=create]")
    assert page.input_value("#url_name") == "articles"
    page.fill("#url_name", "")
    page.click("form.card button[type=submit]")
    assert f"It is served at /objects/{OBJECT}." in page.inner_text("[role=status]")


def test_the_constructor_adds_and_removes_rows_edits_and_deletes_saying_what_happens(start_site, browser):
    site = start_site()
    page = browser.new_page()
    sign_in(page, site.url)
    page.goto(f"{site.url}/mgr/constructor")
    page.click("text=Make the first table")
    assert page.locator("#field-rows tr").count() == 3
    page.click("[data-add-row]")
    page.locator("#field-rows tr").nth(1).locator("[data-remove-row]").click()
    assert page.locator("#field-rows tr").count() == 3
    make_table(page, site.url)
    assert "Table “Новости компании” created." in page.inner_text("[role=status]")
    publish(page, site.url)
    page.goto(f"{site.url}/mgr/constructor/{TABLE}/records/new")
    page.fill("#f-tsena", "100000000000000")  # what a number field lets through, over the limit
    page.click("form.card button[type=submit]")
    assert "Fill this in: it is required." in page.inner_text("main")
    assert "Enter an amount such as 19.99" in page.inner_text("main")
    page.fill("#f-zagolovok", "Новость")
    page.fill("#f-tsena", "9.99")
    page.check("input[name=na_glavnoy]")
    page.click("form.card button[type=submit]")
    assert "Record added." in page.inner_text("[role=status]")
    assert page.inner_text("td[data-label='На главной']") == "Yes"
    page.goto(f"{site.url}/mgr/constructor/{TABLE}/edit")
    page.check("input[name='existing-tsena-remove']")
    page.click("form.card button[type=submit]:has-text('Save the table')")
    warning = page.inner_text("#confirm-removal")
    assert "“Цена”" in warning and f"/api/pb/v1/objects/{OBJECT}" in warning and "1 record" in warning
    page.click("text=Remove and save")
    assert "Removed “Цена”." in page.inner_text("[role=status]")
    page.goto(f"{site.url}/mgr/constructor/{TABLE}/delete")
    consequences = page.inner_text("main")
    assert f"/api/pb/v1/objects/{OBJECT} stops answering" in consequences and "1 record" in consequences
    page.click("text=Delete “Новости компании”")
    assert "Table “Новости компании” deleted" in page.inner_text("[role=status]")


def test_the_cors_page_refuses_an_origin_that_is_not_http_or_https(start_site, browser):
    site = start_site()
    page = browser.new_page()
    sign_in(page, site.url)
    page.goto(f"{site.url}/mgr/pb/settings/cors")
    assert "is sent. The administration area" in page.inner_text("main")
    page.fill("#service_cors_origins", "https://app.example.com, ftp://x")
    page.click("form.card button[type=submit]")
    assert "“ftp://x” is not an origin a browser sends" in page.inner_text("#service_cors_origins-problem")
    assert page.input_value("#service_cors_origins") == "https://app.example.com,ftp://x"


def test_every_administration_page_has_one_shell_and_fits_a_phone(start_site, browser, viewer_server):
    site = start_site(viewer_url=viewer_server)
    setup = browser.new_page()
    sign_in(setup, site.url)
    populate(setup, site.url)
    for viewport in ({"width": 1280, "height": 800}, PHONE):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        sign_in(page, site.url)
        for name, path in PAGES:
            page.goto(site.url + path)
            if name == "docs":
                page.wait_for_selector(".swagger-ui .opblock", timeout=20000)
            nav = page.locator("header.pb-shell nav a").all_inner_texts()
            assert nav == [
                *("Dashboard", "Constructor", "API tabs", "API tokens", "Webhooks", "CORS", "API docs")
            ], name
            sign_out = page.locator("header.pb-shell button:has-text('Sign out')")
            assert sign_out.is_visible() and sign_out.bounding_box()["x"] + 10 < viewport["width"], name
            assert page.locator("link[href='/mgr/pb/static/admin.css']").count() == 1, name
            assert overflow(page) == 0, f"{name} is wider than {viewport['width']} px"
        context.close()


def test_empty_states_link_to_the_next_step(start_site, browser):
    site = start_site()
    page = browser.new_page()
    sign_in(page, site.url)
    for path, link, target in (
        ("/mgr/pb/tables", "Make the first table", "/mgr/constructor/new"),
        ("/mgr/constructor", "Make the first table", "/mgr/constructor/new"),
    ):
        page.goto(site.url + path)
        page.click(f"text={link}")
        assert page.url == site.url + target
    page.goto(f"{site.url}/mgr/pb/tokens")
    for name in page.locator("td[data-label=Name]").all_inner_texts():
        page.once("dialog", lambda dialog: dialog.accept())
        page.locator("tr", has_text=name).locator("button[value=delete]").click()
        page.wait_for_load_state()
    assert re.search("No token yet.*Create the first token", page.inner_text("main"), re.S)


def test_a_token_made_before_a_table_was_published_is_offered_its_scope_on_the_api_tab(start_site, browser):
    site = start_site()
    page = browser.new_page(viewport=PHONE)
    sign_in(page, site.url)
    older = create_token(page, site.url, "older app", ["articles.read"])
    make_table(page, site.url)
    publish(page, site.url)
    address, headers = f"{site.url}/api/pb/v1/objects/{OBJECT}", {"Authorization": f"Bearer {older}"}
    answer = page.request.get(address, headers=headers)
    assert answer.status == 404 and answer.json()["error"] == "unknown_object"

    page.goto(f"{site.url}/mgr/pb/tables/{TABLE}/api")
    tokens = page.locator("#tokens")
    assert "older app" in tokens.inner_text() and "404 unknown_object" in tokens.inner_text()
    tokens.locator(f"button:has-text('Add {OBJECT}.read')").click()
    page.wait_for_url(f"{site.url}/mgr/pb/tables/{TABLE}/api")
    assert f"now has the scope {OBJECT}.read" in page.inner_text("[role=status]")
    reach = page.locator("#tokens").inner_text()
    assert re.search(r"Reach\s+novosti_kompanii\s*:\s*older app\s+enabled\s+\(read\)", reach), reach
    assert overflow(page) == 0
    assert page.request.get(address, headers=headers).status == 200

    page.goto(f"{site.url}/mgr/pb/tokens")
    reaches = page.locator("td[data-label=Reaches]").first.inner_text()
    assert "articles (read)" in reaches and f"{OBJECT} (read)" in reaches
