"""The constructor's edit and delete, and what the API tab passes on to the API: labels, filter, sort."""

from __future__ import annotations

import html
import re

import sqlalchemy as sa

from examples.site.schema import content_fields, content_tables
from pb_headless.constructor import ApiTabStore
from tests.admin.test_api_tabs import TAB, TABLE, make_table, save_tab

EDIT = f"/mgr/constructor/{TABLE}/edit"


def words(page: str) -> str:
    """A page's text as a reader sees it: no tags, entities decoded, one space between words."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page)).split())


async def publish(browser, **extra):
    answer = await save_tab(
        browser,
        enabled="1",
        fields=["title", "body", "tsena"],
        operations=["list", "show", "create"],
        filterable=["title", "tsena"],
        sortable=["title", "tsena"],
        **extra,
    )
    assert answer.status_code == 303, answer.text


async def test_field_labels_name_the_fields_in_validation_messages_and_the_openapi_titles(sqlite_browser):
    browser = sqlite_browser
    plain = await browser.create_token("app", "*")
    await make_table(browser)
    await publish(browser)
    refused = await browser.api("/objects/novosti_kompanii", plain, "POST", json={"tsena": "x"})
    assert refused.status_code == 422
    details = refused.json()["details"]
    assert details["title"] == ["The Заголовок field is required."]  # keyed by name, worded by label
    assert details["tsena"] == ["The Цена field must be a number."]
    document = (await browser.api("/openapi.json", plain)).json()
    schemas = document["components"]["schemas"]
    record = next(
        schema
        for name, schema in schemas.items()
        if name.startswith("novosti_kompanii") and "properties" in schema and "id" in schema["properties"]
    )
    assert record["properties"]["title"]["title"] == "Заголовок"
    assert record["properties"]["tsena"]["title"] == "Цена"
    assert "title" not in record["properties"]["id"]


async def test_filter_and_sort_are_chosen_per_field(sqlite_browser):
    browser = sqlite_browser
    plain = await browser.create_token("app", "*")
    await make_table(browser)
    await publish(browser)
    described = {o["name"]: o for o in (await browser.api("/objects", plain)).json()["data"]}[
        "novosti_kompanii"
    ]
    assert described["filterable"] == ["id", "title", "tsena"]
    assert described["sortable"] == ["id", "title", "tsena"]
    ignored = (await browser.api("/objects/novosti_kompanii?sort=body", plain)).json()
    assert (
        ignored["meta"].get("ignored")
        or (await browser.api("/objects/novosti_kompanii?sort=body", plain)).status_code == 422
    )


async def test_long_text_is_not_sortable_until_the_tab_says_so(sqlite_browser):
    browser = sqlite_browser
    await make_table(browser)
    page = (await browser.get(TAB)).text
    assert 'name="sortable" value="title" aria-label="Заголовок: sort" checked' in page
    assert 'name="sortable" value="body" aria-label="Текст: sort">' in page  # not checked
    assert 'name="filterable" value="body" aria-label="Текст: filter" checked' in page


async def test_a_url_name_taken_by_a_declaration_is_refused_before_saving_and_the_form_is_kept(browser):
    await make_table(browser)
    page = await save_tab(
        browser, enabled="1", fields=["title", "body"], operations=["list", "create"], url_name="articles"
    )
    assert page.status_code == 422
    text = html.unescape(page.text)
    assert "The URL name “articles” is already used by the declaration file (api.py)." in text
    assert "/core/App" not in text and "site/core" not in text  # never a server path
    assert 'name="fields" value="body" aria-label="Текст: published" checked' in page.text
    assert 'name="operations" value="create" checked' in page.text
    assert 'id="url_name" name="url_name" value="articles"' in page.text
    assert await ApiTabStore(browser.site.database).all() == {}
    # with the switch off the name takes nothing from anyone, so it may be kept
    off = await save_tab(browser, fields=["title"], operations=["list"], url_name="articles")
    assert off.status_code == 303


async def test_editing_a_table_adds_and_removes_fields_after_saying_what_the_api_loses(browser):
    plain = await browser.create_token("app", "*")
    await make_table(browser)
    await publish(browser)
    form = {
        "title": "Новости",
        "existing-title-label": "Заголовок новости",
        "existing-title-searchable": "1",
        "existing-body-label": "Текст",
        "existing-tsena-label": "Цена",
        "existing-tsena-remove": "1",
        "field-0-label": "Автор",
        "field-0-type": "string",
    }
    asked = await browser.submit(EDIT, form, form_page=EDIT)
    assert asked.status_code == 200
    text = words(asked.text)
    assert "Remove “Цена”?" in text and "2 records are deleted for good" in text
    assert "/api/pb/v1/objects/novosti_kompanii stops serving this field" in text
    assert "tsena" in (await browser.api("/objects/novosti_kompanii", plain)).json()["data"][0]  # nothing yet
    saved = await browser.submit(EDIT, {**form, "confirmed": "1"}, form_page=EDIT)
    assert saved.status_code == 303, saved.text
    page = html.unescape((await browser.get(saved.headers["location"])).text)
    assert (
        "Table “Новости” saved. Added “Автор”: tick them on the API tab to publish them. Removed “Цена”."
        in page
    )
    row = (await browser.api("/objects/novosti_kompanii", plain)).json()["data"][0]
    assert "tsena" not in row and "avtor" not in row  # dropped; the new field waits for its tick
    query = sa.select(content_fields.c.name, content_fields.c.label).order_by(content_fields.c.position)
    fields = await browser.site.database.fetch_all(query)
    assert [(f[0], f[1]) for f in fields] == [
        ("title", "Заголовок новости"),
        ("body", "Текст"),
        ("avtor", "Автор"),
    ]
    record = f"/mgr/constructor/{TABLE}/records/new"
    added = await browser.submit(
        record, {"title": "С автором", "avtor": "Анна", "published": "1"}, form_page=record
    )
    assert added.status_code == 303


async def test_deleting_a_table_says_what_happens_to_its_api_then_removes_everything(browser):
    plain = await browser.create_token("app", "*")
    await make_table(browser)
    await publish(browser)
    page = words((await browser.get(f"/mgr/constructor/{TABLE}/delete")).text)
    assert "Its 2 records and its fields are deleted for good" in page
    assert "/api/pb/v1/objects/novosti_kompanii stops answering at once (404)" in page
    assert (await browser.api("/objects/novosti_kompanii", plain)).status_code == 200
    done = await browser.submit(
        f"/mgr/constructor/{TABLE}/delete", {}, form_page=f"/mgr/constructor/{TABLE}/delete"
    )
    assert done.status_code == 303 and done.headers["location"] == "/mgr/constructor"
    assert (await browser.api("/objects/novosti_kompanii", plain)).status_code == 404
    assert await browser.site.database.fetch_all(sa.select(content_tables)) == []
    assert await ApiTabStore(browser.site.database).all() == {}
    listing = html.unescape((await browser.get("/mgr/constructor")).text)
    assert "Table “Новости компании” deleted, with its records and its API tab." in listing
