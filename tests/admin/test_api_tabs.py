"""The constructor and the API tab (docs/constructor.md), through the example site."""

from __future__ import annotations

import sqlalchemy as sa

from examples.site.schema import content_tables
from pb_headless.constructor import ApiTabStore

TABLE = "ct_novosti_kompanii"
TAB = f"/mgr/pb/tables/{TABLE}/api"
NEW_TABLE = {
    "title": "Новости компании",
    "field-0-label": "Заголовок",
    "field-0-name": "title",
    "field-0-type": "string",
    "field-0-length": "120",
    "field-0-required": "1",
    "field-0-searchable": "1",
    "field-1-label": "Текст",
    "field-1-name": "body",
    "field-1-type": "text",
    "field-1-searchable": "1",
    "field-2-label": "Цена",
    "field-2-type": "decimal",
}


async def make_table(browser) -> None:
    answer = await browser.submit("/mgr/constructor/new", NEW_TABLE, form_page="/mgr/constructor/new")
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/mgr/constructor/{TABLE}"
    for row in (
        {"title": "Первая новость", "body": "Текст новости", "tsena": "10.50", "published": "1"},
        {"title": "Черновик", "body": "Ещё не опубликовано", "tsena": ""},
    ):
        saved = await browser.submit(
            f"/mgr/constructor/{TABLE}/records/new", row, form_page=f"/mgr/constructor/{TABLE}/records/new"
        )
        assert saved.status_code == 303, saved.text


async def save_tab(browser, **fields):
    return await browser.submit(TAB, fields, form_page=TAB)


async def test_a_table_made_in_the_constructor_is_published_by_its_api_tab(browser):
    plain = await browser.create_token("app", "*")
    await make_table(browser)
    assert "novosti_kompanii" not in [
        o["name"] for o in (await browser.api("/objects", plain)).json()["data"]
    ]
    answer = await save_tab(browser, enabled="1", fields=["title", "body"], operations=["list", "show"])
    assert answer.status_code == 303
    objects = {o["name"]: o for o in (await browser.api("/objects", plain)).json()["data"]}
    assert objects["novosti_kompanii"]["fields"] == ["id", "title", "body"]
    assert objects["novosti_kompanii"]["searchable"] == ["title", "body"]
    assert objects["novosti_kompanii"]["operations"] == ["list", "show"]
    listing = (await browser.api("/objects/novosti_kompanii", plain)).json()
    assert [row["title"] for row in listing["data"]] == ["Первая новость"]
    assert "tsena" not in listing["data"][0]
    page = await browser.get(TAB)
    assert "published" in page.text and "/api/pb/v1/objects/novosti_kompanii" in page.text


async def test_the_switch_on_with_no_field_ticked_publishes_nothing(sqlite_browser):
    browser = sqlite_browser
    plain = await browser.create_token("app", "*")
    await make_table(browser)
    await save_tab(browser, enabled="1", operations=["list", "show"])
    assert "novosti_kompanii" not in [
        o["name"] for o in (await browser.api("/objects", plain)).json()["data"]
    ]
    assert "no field is ticked" in (await browser.get("/mgr/pb/tables")).text
    await save_tab(browser, fields=["title"], operations=["list", "show"])  # ticked, switch off
    assert (await browser.api("/objects/novosti_kompanii", plain)).status_code == 404


async def test_write_operations_and_a_url_name_are_added_on_the_tab(browser):
    plain = await browser.create_token("app", "news.read,news.write")
    await make_table(browser)
    await save_tab(
        browser,
        enabled="1",
        fields=["title", "body", "tsena"],
        url_name="news",
        operations=["list", "show", "create", "update"],
    )
    created = await browser.api("/objects/news", plain, "POST", json={"title": "Из API", "tsena": "3.20"})
    assert created.status_code == 201, created.text
    assert created.json()["data"]["tsena"] == "3.20"
    refused = await browser.api("/objects/news", plain, "POST", json={"body": "no title"})
    assert refused.status_code == 422 and "title" in refused.json()["details"]
    deleted = await browser.api(f"/objects/news/{created.json()['data']['id']}", plain, "DELETE")
    assert deleted.status_code == 405
    assert (await browser.api("/objects/novosti_kompanii", plain)).status_code == 404


async def test_the_api_tab_refuses_a_post_without_the_csrf_token(sqlite_browser):
    browser = sqlite_browser
    await make_table(browser)
    answer = await browser.client.post(
        TAB, data={"enabled": "1", "fields": ["title"], "operations": ["list"]}
    )
    assert answer.status_code == 403
    assert not (await ApiTabStore(browser.site.database).get(TABLE)).enabled


async def test_a_bad_url_name_is_shown_on_the_tab_and_nothing_is_saved(sqlite_browser):
    browser = sqlite_browser
    await make_table(browser)
    page = await save_tab(browser, enabled="1", fields=["title"], operations=["list"], url_name="no spaces")
    assert page.status_code == 422 and "URL name" in page.text
    assert await ApiTabStore(browser.site.database).all() == {}


async def test_a_refused_table_definition_creates_nothing(sqlite_browser):
    browser = sqlite_browser
    for fields, message in (
        ({"title": "Bad", "field-0-name": "id"}, "every constructor table has already"),
        ({"title": "", "field-0-name": "a"}, "needs a title"),
        ({"title": "Empty"}, "at least one field"),
        ({"title": "Bad", "field-0-name": "a", "field-0-type": "money"}, "unknown type"),
    ):
        page = await browser.submit("/mgr/constructor/new", fields, form_page="/mgr/constructor/new")
        assert page.status_code == 422, fields
        assert message in page.text
    assert await browser.site.database.fetch_all(sa.select(content_tables)) == []


async def test_the_record_editor_checks_values_by_field_type(sqlite_browser):
    browser = sqlite_browser
    await make_table(browser)
    page = await browser.submit(
        f"/mgr/constructor/{TABLE}/records/new",
        {"title": "", "tsena": "много"},
        form_page=f"/mgr/constructor/{TABLE}/records/new",
    )
    assert page.status_code == 422
    assert "Nothing was saved: 2 fields below need a change." in page.text
    assert "Fill this in: it is required." in page.text
    assert "Enter an amount such as 19.99, below 10 trillion." in page.text
    assert 'value="много"' in page.text  # what was typed stays in the form
    table_page = await browser.get(f"/mgr/constructor/{TABLE}")
    assert (
        table_page.text.count("/records/") - table_page.text.count("/records/new") == 4
    )  # 2 rows: edit + delete


async def test_an_unknown_table_has_no_api_tab(sqlite_browser):
    answer = await sqlite_browser.get("/mgr/pb/tables/ct_missing/api")
    assert answer.status_code == 404
