"""docs/query.md's operator table: each example filter finds exactly the rows its "matches" column names."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx
import pytest

from tests.docs.pages import REPOSITORY
from tests.docs.running import SITE_PORT, page_run, start_example_site

pytestmark = pytest.mark.slow
ROW = re.compile(r"^\| `(?P<operator>[^`]+)`.*\| `(?P<example>filter\[[^`]+)` \| (?P<matches>[\d, ]+)", re.M)


def documented_filters() -> list[tuple[str, list[int]]]:
    table = (
        (REPOSITORY / "docs" / "query.md")
        .read_text()
        .split("| operator | meaning |", 1)[1]
        .split("\n\n", 1)[0]
    )
    rows = [
        (row["example"], [int(n) for n in row["matches"].replace(",", " ").split()])
        for row in ROW.finditer(table)
    ]
    assert len(rows) == 8, f"the operator table has {len(rows)} rows with an example and matches"
    return rows


def test_every_example_of_the_operator_table_finds_the_rows_it_names(tmp_path):
    with page_run(tmp_path) as run:
        start_example_site(run)
        token = run.variables()["TOKEN"]
        for example, ids in documented_filters():
            query = f"{quote(example, safe='[]=,')}&fields=id&sort=id"
            answer = httpx.get(
                f"http://127.0.0.1:{run.port(SITE_PORT)}/api/pb/v1/objects/articles?{query}",
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
            assert answer.status_code == 200, f"{example}: {answer.text}"
            assert [row["id"] for row in answer.json()["data"]] == ids, example
