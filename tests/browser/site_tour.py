"""A tour of every administration page of a running examples/site, shared by the browser tests and
`scripts/screenshots.py`: start a site, sign in, fill it with a table, a record and a token, list pages."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.openapi.serving import free_port, serving
from tests.support.server import REPOSITORY

ADMIN = ("owner", "correct horse battery")
TABLE = "ct_novosti_kompanii"
OBJECT = "novosti_kompanii"
# Every administration page, as (name, path); the reveal page is reached by creating a token.
PAGES = [
    ("dashboard", "/mgr/"),
    ("constructor", "/mgr/constructor"),
    ("new-table", "/mgr/constructor/new"),
    ("table", f"/mgr/constructor/{TABLE}"),
    ("edit-table", f"/mgr/constructor/{TABLE}/edit"),
    ("delete-table", f"/mgr/constructor/{TABLE}/delete"),
    ("record", f"/mgr/constructor/{TABLE}/records/new"),
    ("tokens", "/mgr/pb/tokens"),
    ("token-edit", "/mgr/pb/tokens/edit?name=mobile%20app"),
    ("webhooks", "/mgr/pb/webhooks"),
    ("webhook-deliveries", "/mgr/pb/webhooks/deliveries?name=search%20indexer"),
    ("webhook-edit", "/mgr/pb/webhooks/edit?name=search%20indexer"),
    ("api-tabs", "/mgr/pb/tables"),
    ("api-tab", f"/mgr/pb/tables/{TABLE}/api"),
    ("cors", "/mgr/pb/settings/cors"),
    ("docs", "/mgr/pb/docs?ctx=mgr"),
]


@dataclass
class RunningSite:
    url: str
    database_url: str
    log: Path


def site_command(arguments: list[str], environment: dict[str, str]) -> None:
    command = [sys.executable, "-m", "examples.site", *arguments]
    env = {**os.environ, **environment, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(command, cwd=REPOSITORY, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} failed:\n{done.stdout}\n{done.stderr}")


@contextlib.contextmanager
def running_site(folder: Path, viewer_url: str | None = None) -> Iterator[RunningSite]:
    """A fresh examples/site on SQLite in `folder`, with the administrator ADMIN, served on a free port."""
    folder.mkdir(parents=True, exist_ok=True)
    environment = {"PB_DATABASE_URL": f"sqlite:///{folder / 'site.db'}"}
    site_command(["init"], environment)
    site_command(["admin", "create", "--username", ADMIN[0], "--password", ADMIN[1]], environment)
    if viewer_url:
        environment["PB_DOCS_VIEWER_URL"] = viewer_url
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "examples.site", "serve", "--host", "127.0.0.1", "--port", str(port)]
    with serving(command, f"{url}/mgr/login", folder / "server.log", environment):
        yield RunningSite(url, environment["PB_DATABASE_URL"], folder / "server.log")


def sign_in(page: Any, url: str, next_path: str = "/mgr/") -> None:
    page.goto(f"{url}{next_path}")
    page.fill("#username", ADMIN[0])
    page.fill("#password", ADMIN[1])
    page.click("form.card button[type=submit]")
    page.wait_for_load_state()


def make_table(page: Any, url: str) -> None:
    """The constructor's new-table form, filled as a site owner would, with a fourth row added."""
    page.goto(f"{url}/mgr/constructor/new")
    page.fill("#title", "Новости компании")
    rows = page.locator("#field-rows tr")
    for index, (label, kind, required) in enumerate(
        [("Заголовок", "string", True), ("Текст", "text", False), ("Цена", "decimal", False)]
    ):
        row = rows.nth(index)
        row.locator("input[name$='-label']").fill(label)
        row.locator("select").select_option(kind)
        if required:
            row.locator("input[name$='-required']").check()
    page.click("[data-add-row]")
    fourth = page.locator("#field-rows tr").nth(3)
    fourth.locator("input[name$='-label']").fill("На главной")
    fourth.locator("select").select_option("boolean")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{url}/mgr/constructor/{TABLE}")


def add_record(page: Any, url: str, title: str, price: str, featured: bool) -> None:
    page.goto(f"{url}/mgr/constructor/{TABLE}/records/new")
    page.fill("#f-zagolovok", title)
    page.fill("#f-tekst", "Текст новости о компании и её работе.")
    page.fill("#f-tsena", price)
    if featured:
        page.check("input[name=na_glavnoy]")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{url}/mgr/constructor/{TABLE}")


def publish(page: Any, url: str) -> None:
    page.goto(f"{url}/mgr/pb/tables/{TABLE}/api")
    page.check("input[name=enabled]")
    for name in ("zagolovok", "tekst", "tsena", "na_glavnoy"):
        page.check(f"input[name=fields][value={name}]")
    page.click("form.card button[type=submit]")
    page.wait_for_load_state()


def create_token(page: Any, url: str, name: str, scopes: list[str], other: str = "") -> str:
    """Create a token through the form; returns its value as the reveal page shows it."""
    page.goto(f"{url}/mgr/pb/tokens")
    page.fill("#name", name)
    for scope in scopes:
        page.check(f"input[name=scope][value='{scope}']")
    if other:
        page.fill("#scopes", other)
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{url}/mgr/pb/tokens/reveal?**")
    return str(page.inner_text("#token-value")).strip()


def create_webhook(page: Any, url: str, name: str, address: str, objects: tuple[str, ...] = ()) -> str:
    """Register a webhook through the form; returns its secret as the one-time page shows it."""
    page.goto(f"{url}/mgr/pb/webhooks")
    page.fill("#name", name)
    page.fill("#url", address)
    for item in objects:
        page.check(f"input[name=objects][value='{item}']")
    page.click("form.card button:has-text('Create webhook')")
    page.wait_for_url(f"{url}/mgr/pb/webhooks/secret?**")
    return str(page.inner_text("#secret-value")).strip()


def populate(page: Any, url: str) -> None:
    """A table with two records, published, a token and a webhook: every page has something to show."""
    make_table(page, url)
    add_record(page, url, "Мы открыли новый офис", "1250.50", True)
    add_record(page, url, "Итоги года", "", False)
    publish(page, url)
    create_token(page, url, "mobile app", ["articles.read", f"{OBJECT}.*"])
    create_webhook(
        page, url, "search indexer", "https://hooks.example.com/pb/deliveries/search-indexer-production"
    )


# Every place a token, scope or object name is shown in a table or card: each must sit on one line.
NAME_SELECTORS = ", ".join(
    (
        "td[data-label=Name] strong",
        "td[data-label=Scopes] code",
        "td[data-label=Reaches] code",
        "td[data-label=Objects] code",
        "td[data-label=Event] code",
        "#tokens strong",
        "#tokens code",
        "#tokens button .name",
    )
)


def split_names(page: Any) -> list[str]:
    """The words of names on the page that the browser broke over two lines ("articles.rea d"); a
    name of several words may wrap between them."""
    return list(
        page.evaluate(
            """selector => {
              const split = [];
              for (const element of document.querySelectorAll(selector)) {
                const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
                for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                  for (const word of node.data.matchAll(/\\S+/g)) {
                    const range = document.createRange();
                    range.setStart(node, word.index);
                    range.setEnd(node, word.index + word[0].length);
                    const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                    if (lines.size > 1) split.push(word[0]);
                  }
                }
              }
              return split;
            }""",
            NAME_SELECTORS,
        )
    )


def overflow(page: Any) -> int:
    """How many CSS pixels the page is wider than the viewport (0 when nothing sticks out)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
