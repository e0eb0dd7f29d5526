"""Which tokens reach a newly published table (issue 25, point 1): the owner who publishes a table and
gets 404 `unknown_object` with an older token sees why on the table's API tab and fixes it there."""

from __future__ import annotations

import re

from tests.admin.test_api_tabs import TAB, make_table, save_tab

OBJECT = "/objects/novosti_kompanii"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


async def test_the_api_tab_names_the_tokens_that_reach_it_and_adds_the_scope_to_another(sqlite_browser):
    browser = sqlite_browser
    everything = await browser.create_token("everything", "*")
    articles_only = await browser.create_token("articles app", "articles.read")
    await make_table(browser)
    await save_tab(browser, enabled="1", fields=["title"], operations=["list", "show"])
    refused = await browser.api(OBJECT, articles_only)
    assert refused.status_code == 404 and refused.json()["error"] == "unknown_object"

    page = text_of((await browser.get(TAB)).text)
    assert "Reach novosti_kompanii : everything enabled (read and write)" in page
    assert "These tokens get 404 unknown_object here" in page
    assert "articles app enabled Add novosti_kompanii.read" in page

    granted = await browser.submit(
        "/mgr/pb/tokens/grant",
        {"name": "articles app", "scope": "novosti_kompanii.read", "back": "/tables/ct_novosti_kompanii/api"},
        form_page=TAB,
    )
    assert granted.status_code == 303 and granted.headers["location"] == TAB
    assert (await browser.api(OBJECT, articles_only)).status_code == 200
    assert (await browser.api("/objects/articles", articles_only)).status_code == 200
    after = text_of((await browser.get(TAB)).text)
    assert "articles app enabled (read)" in after and "404 unknown_object here" not in after
    assert (await browser.api(OBJECT, everything)).status_code == 200


async def test_the_token_list_names_the_objects_each_token_reaches(sqlite_browser):
    browser = sqlite_browser
    await browser.create_token("reader", "articles.read")
    await browser.create_token("typo", "artciles.read")
    page = text_of((await browser.get("/mgr/pb/tokens")).text)
    assert "reader" in page and "articles (read)" in page
    assert re.search(r"typo \S+… artciles\.read nothing published", page), page


async def test_the_grant_button_goes_back_only_within_the_administration_area(sqlite_browser):
    browser = sqlite_browser
    await browser.create_token("reader", "articles.read")
    answer = await browser.submit(
        "/mgr/pb/tokens/grant",
        {"name": "reader", "scope": "authors.read", "back": "//evil.example/"},
        form_page="/mgr/pb/tokens",
    )
    assert answer.headers["location"] == "/mgr/pb/tokens"
    unknown = {"name": "nobody", "scope": "authors.read", "back": "/tokens"}
    refused = await browser.submit("/mgr/pb/tokens/grant", unknown, form_page="/mgr/pb/tokens")
    assert refused.status_code == 303
    assert "Nothing was changed" in (await browser.get("/mgr/pb/tokens")).text


async def test_the_api_tab_of_a_writable_table_shows_its_batch_endpoint_and_who_may_use_it(sqlite_browser):
    browser = sqlite_browser
    writer = await browser.create_token("writer app", "news.write")
    await browser.create_token("reader app", "news.read")
    await make_table(browser)
    await save_tab(browser, enabled="1", fields=["title"], url_name="news", operations=["list", "show"])
    assert "Atomic batches" not in text_of((await browser.get(TAB)).text)  # read-only: nothing to batch

    await save_tab(
        browser, enabled="1", fields=["title"], url_name="news", operations=["list", "create", "update"]
    )
    page = text_of((await browser.get(TAB)).text)
    assert "sends its create, update operations" in page and "/api/pb/v1/batch" in page
    assert "Tokens that may: writer app ." in page and "reader app ." not in page.split("Atomic batches")[1]
    batch = {"operations": [{"op": "create", "object": "news", "data": {"title": "Из пакета"}}]}
    answer = await browser.api("/batch", writer, "POST", json=batch)
    assert answer.status_code == 200 and answer.json()["data"][0]["status"] == 201


async def test_the_api_tab_shows_each_tokens_state_next_to_it_and_next_to_add_read(sqlite_browser):
    browser = sqlite_browser
    for name in ("live", "stopped", "lapsed", "live reader", "lapsed reader"):
        await browser.create_token(name, "novosti_kompanii.read" if "reader" in name else "articles.read")
    await browser.submit("/mgr/pb/tokens/action", {"name": "stopped", "action": "disable"})
    await _expire(browser.site.database, "lapsed", "lapsed reader")
    await make_table(browser)
    await save_tab(browser, enabled="1", fields=["title"], operations=["list", "show"])
    page = text_of((await browser.get(TAB)).text)
    tokens = text_of((await browser.get("/mgr/pb/tokens")).text)

    assert "live reader enabled (read)" in page and "lapsed reader expired (read)" in page
    assert "live enabled Add novosti_kompanii.read" in page
    assert "stopped disabled Add novosti_kompanii.read — it answers 401 until it is enabled" in page
    assert (
        "lapsed expired Add novosti_kompanii.read — it answers 401 until it is given a later expiry" in page
    )
    assert re.search(r"lapsed \S+… articles\.read .* expired", tokens)


async def _expire(database, *names: str) -> None:
    """An expiry in the past is refused when set, so time is moved on in the table."""
    from datetime import timedelta

    import sqlalchemy as sa

    from pb_headless.database.dialect import utcnow
    from pb_headless.tables import tokens

    past = utcnow() - timedelta(hours=1)
    await database.execute(sa.update(tokens).where(tokens.c.name.in_(names)).values(expires_at=past))
