"""The example site's public pages, rendered server-side from the published articles."""

from __future__ import annotations

from tests.site.harness import open_site


async def test_the_home_page_lists_published_articles_only(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        page = await browser.get("/")
    assert page.status_code == 200
    assert "Новости компании" in page.text and "Welcome to the example site" in page.text
    assert "Draft: not published yet" not in page.text
    assert "Борис Иванов" in page.text
    assert "set-cookie" not in page.headers  # public pages carry no session


async def test_an_article_page_shows_a_published_article_and_404s_for_the_rest(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        article = await browser.get("/articles/2")
        draft = await browser.get("/articles/5")
        missing = await browser.get("/articles/999")
        not_a_number = await browser.get("/articles/abc")
    assert article.status_code == 200
    assert "Большие новости" in article.text
    assert draft.status_code == 404 and missing.status_code == 404 and not_a_number.status_code == 404


async def test_the_api_is_dormant_until_a_token_exists(sqlite_database):
    async with open_site(str(sqlite_database.url), logged_in=False) as browser:
        health = await browser.get("/api/pb/v1/health")
        objects = await browser.get("/api/pb/v1/objects")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert objects.status_code == 401
