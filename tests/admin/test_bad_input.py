"""Client input never causes a 5xx in the administration area or on the public pages."""

from __future__ import annotations

BIG = "9" * 25


async def test_odd_addresses_answer_404_not_a_server_error(sqlite_browser):
    for path in (
        f"/articles/{BIG}",
        "/articles/-1",
        "/articles/١٢",
        f"/mgr/constructor/ct_x/records/{BIG}",
        "/mgr/constructor/no_such_table",
        "/mgr/pb/tokens/edit?name=nope",
        "/mgr/pb/tokens/edit",
        "/mgr/pb/tables/x/api",
    ):
        answer = await sqlite_browser.get(path)
        assert answer.status_code == 404, path


async def test_odd_form_values_are_refused_on_the_form(sqlite_browser):
    browser = sqlite_browser
    for fields in (
        {"name": "x" * 300, "scopes": "a.read"},
        {"name": "x", "scopes": "a.read", "expires_at": "soon"},
        {"name": "y", "scopes": "a.read", "user_id": BIG},
        {"name": "z", "scopes": "a.read", "user_id": "١"},
    ):
        assert (await browser.submit("/mgr/pb/tokens", fields)).status_code == 422, fields
    answer = await browser.submit("/mgr/pb/tokens/action", {"name": "nope", "action": "explode"})
    assert answer.status_code == 400
    answer = await browser.submit("/mgr/pb/tokens/action", {"name": "nope", "action": "disable"})
    assert answer.status_code == 303 and "No token named" in (await browser.get("/mgr/pb/tokens")).text
    new_table = {"title": "T", "field-0-name": "a", "field-0-type": "string", "field-0-length": BIG}
    answer = await browser.submit("/mgr/constructor/new", new_table, form_page="/mgr/constructor/new")
    assert answer.status_code == 422


async def test_out_of_range_record_values_are_refused_by_the_record_editor(sqlite_browser):
    browser = sqlite_browser
    fields = {
        "title": "Numbers",
        "field-0-name": "count",
        "field-0-type": "integer",
        "field-1-name": "amount",
        "field-1-type": "decimal",
        "field-2-name": "ratio",
        "field-2-type": "number",
    }
    await browser.submit("/mgr/constructor/new", fields, form_page="/mgr/constructor/new")
    page = "/mgr/constructor/ct_numbers/records/new"
    for values in ({"count": BIG}, {"amount": BIG}, {"amount": "NaN"}, {"ratio": "inf"}, {"count": "1.5"}):
        answer = await browser.submit(page, values, form_page=page)
        assert answer.status_code == 422, values
    saved = await browser.submit(
        page, {"count": "-7", "amount": "12.345", "ratio": "0.5", "published": "1"}, form_page=page
    )
    assert saved.status_code == 303
    assert "12.35" in (await browser.get("/mgr/constructor/ct_numbers")).text


async def test_an_unreadable_form_body_is_refused_without_a_server_error(sqlite_browser):
    for path in ("/mgr/pb/tokens", "/mgr/login", "/mgr/pb/settings/cors", "/mgr/constructor/new"):
        answer = await sqlite_browser.client.post(
            path, content=b"--x\r\nbroken", headers={"content-type": "multipart/form-data; boundary=x"}
        )
        assert answer.status_code in (400, 403), path
