"""A new token value is shown once, after a redirect; scopes are chosen from what is published."""

from __future__ import annotations

import html

from pb_headless.tables import tokens as tokens_table
from tests.site.harness import token_value


async def prefixes(browser) -> list[str]:
    return [row._mapping["prefix"] for row in await browser.site.database.fetch_all(tokens_table.select())]


async def test_create_redirects_to_a_page_that_shows_the_value_once_and_never_again(sqlite_browser):
    browser = sqlite_browser
    answer = await browser.submit("/mgr/pb/tokens", {"name": "mobile", "scopes": "articles.read"})
    assert answer.status_code == 303
    address = answer.headers["location"]
    plain = token_value(await browser.get(address))
    assert plain not in address  # the address carries only a masked half of the value
    again = await browser.get(address)  # a reload, or Back to the page
    assert again.status_code == 410
    assert plain not in again.text and "was already shown" in again.text
    assert "mobile" in again.text
    assert [row.name for row in await browser.site.api.tokens.list()] == ["mobile"]  # nothing created twice
    assert (await browser.api("/objects/articles", plain)).status_code == 200


async def test_reloading_after_a_reissue_neither_reissues_again_nor_shows_the_value(sqlite_browser):
    browser = sqlite_browser
    await browser.create_token("app", "articles.read")
    answer = await browser.submit("/mgr/pb/tokens/action", {"name": "app", "action": "reissue"})
    plain = token_value(await browser.get(answer.headers["location"]))
    after_reissue = await prefixes(browser)
    reload = await browser.get(answer.headers["location"])
    assert reload.status_code == 410 and plain not in reload.text
    assert await prefixes(browser) == after_reissue  # the value just copied still works
    assert (await browser.api("/objects/articles", plain)).status_code == 200


async def test_a_reveal_address_from_another_session_shows_nothing(sqlite_browser):
    browser = sqlite_browser
    answer = await browser.submit("/mgr/pb/tokens", {"name": "mobile", "scopes": "articles.read"})
    address = answer.headers["location"]
    browser.client.cookies.clear()  # someone else, with the address from the history but not the session
    assert (await browser.get(address)).status_code == 303  # sent to sign in
    await browser.login()
    assert (await browser.get(address)).status_code == 410


async def test_the_form_offers_read_write_and_group_scopes_of_every_published_object(sqlite_browser):
    page = (await sqlite_browser.get("/mgr/pb/tokens")).text
    for scope in ("articles.read", "articles.write", "articles.*", "authors.read", "*"):
        assert f'name="scope" value="{scope}"' in page
    plain = await sqlite_browser.create_token("both", "", scope=["articles.read", "authors.*"])
    me = (await sqlite_browser.api("/me", plain)).json()["data"]
    assert me["scopes"] == ["articles.read", "authors.*"]


async def test_every_malformed_scope_is_reported_at_once_and_the_choices_are_kept(sqlite_browser):
    page = await sqlite_browser.submit(
        "/mgr/pb/tokens",
        {"name": "bad", "scopes": "Articles.Read articles reports.read", "scope": "authors.read"},
    )
    assert page.status_code == 422
    text = html.unescape(page.text)
    assert "'Articles.Read', 'articles': these are not scopes" in text
    assert 'name="scope" value="authors.read" checked' in page.text
    assert 'value="Articles.Read articles reports.read"' in page.text
    assert await sqlite_browser.site.api.tokens.list() == []


async def test_a_scope_that_reaches_nothing_is_saved_with_a_warning(sqlite_browser):
    answer = await sqlite_browser.submit("/mgr/pb/tokens", {"name": "typo", "scopes": "artciles.read"})
    page = await sqlite_browser.revealed(answer)
    assert "'artciles.read' reaches nothing published" in html.unescape(page.text)
    edited = await sqlite_browser.submit(
        "/mgr/pb/tokens/edit?name=typo", {"scopes": "artciles.read authors.read"}
    )
    assert edited.status_code == 303
    listing = html.unescape((await sqlite_browser.get("/mgr/pb/tokens")).text)
    assert "Token “typo” saved. 'artciles.read' reaches nothing published" in listing


async def test_every_confirmation_names_the_token(sqlite_browser):
    await sqlite_browser.create_token("mobile app", "articles.read")
    page = html.unescape((await sqlite_browser.get("/mgr/pb/tokens")).text)
    for question in (
        "Reissue the token “mobile app”?",
        "Disable the token “mobile app”?",
        "Delete the token “mobile app”",
    ):
        assert f'data-confirm="{question}' in page
