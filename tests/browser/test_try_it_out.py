"""Swagger UI's "Try it out" on a list (issue 25, point 4), in Chromium at 1280 and 390 px: filtering by
one field is one text box, and an open list operation fits a few screens with a readable status column.

Each run writes `try-it-out-<width>.png` (the whole page, the operation open, the answer shown) for a
person to look at: into $PB_SCREENSHOTS when set, else into the test's temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.browser.test_docs_page import sign_in_to_docs

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The whole page with the list operation open; it was 10,141 px at 1280 before the filter boxes
# became one input per field. The cursor, count and conditional-request parameters and their answers
# (docs/caching.md) add about 900 px at 1280 and 2,000 at 390; the example site's relation path
# `author.name` (docs/query.md, "Filters across relations") one box per operator, about 700 and 1,100.
TALLEST = {1280: 9000, 390: 13500}
NARROWEST_STATUS = 40  # px: "Code" must show three digits, not one character


def authorize(page, token: str) -> None:
    page.click(".swagger-ui .auth-wrapper button.authorize")
    dialog = page.locator(".dialog-ux")
    dialog.locator("input").first.fill(token)  # the first scheme: Authorization: Bearer
    dialog.locator("button.authorize").first.click()
    dialog.locator("button.btn-done").first.click()


@pytest.mark.parametrize("width", [1280, 390])
def test_filtering_a_list_by_one_field_is_one_text_box_and_the_open_operation_fits(
    start_site, browser, tmp_path, width
):
    site = start_site()  # the `viewer` extra (dev) serves Swagger UI from the site
    token = site.token("*")
    page = browser.new_page(viewport={"width": width, "height": 800})
    sign_in_to_docs(page, site)
    page.wait_for_selector(".swagger-ui .info .title", timeout=20000)
    authorize(page, token)
    operation = page.locator("#operations-articles-list_articles")
    operation.locator(".opblock-summary").click()
    operation.locator("button.execute").wait_for(timeout=5000)

    assert operation.locator('tr[data-param-name^="filter["] textarea').count() == 0
    operation.locator('tr[data-param-name="filter[category]"] input[type=text]').fill("news")
    with page.expect_response(lambda answer: "/api/pb/v1/objects/articles" in answer.url) as answered:
        operation.locator("button.execute").click()
    answer = answered.value
    assert "filter[category]=news" in unquote(answer.url)
    assert answer.status == 200
    records = answer.json()["data"]
    assert records and {record["category"] for record in records} == {"news"}
    assert "ignored" not in answer.json()["meta"]
    operation.locator(".live-responses-table .response-col_status").first.wait_for()

    facts = page.evaluate(
        """() => ({
            height: document.documentElement.scrollHeight,
            overflow: document.documentElement.scrollWidth - window.innerWidth,
            status: Math.min(...Array.from(document.querySelectorAll(
                '#operations-articles-list_articles .responses-table .response-col_status'))
                .map(cell => cell.getBoundingClientRect().width)),
        })"""
    )
    folder = Path(os.environ.get("PB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"try-it-out-{width}.png"), full_page=True)
    assert facts["height"] < TALLEST[width], facts
    assert facts["status"] >= NARROWEST_STATUS, facts
    assert facts["overflow"] <= 0, facts
