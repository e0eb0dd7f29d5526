"""The declaration files docs/declarations.md shows, served as a site serves them (examples/bookshop/ with
every key, examples/tagged/ with a many-to-many relation), on each database."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tests.site.harness import open_site

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


async def test_the_bookshop_serves_every_key_of_its_declaration(database):
    async with open_site(str(database.url), site_dir=EXAMPLES / "bookshop") as browser:
        await _seed_bookshop(database)
        reader = await browser.create_token("reader", "catalog.read")
        writer = await browser.create_token("writer", "catalog.read,catalog.write")
        listing = await browser.api("/objects/books?with=writer,reviews&fields=title,pages", reader)
        created = await browser.api("/objects/books", writer, "POST", json={"title": "New", "price": 5})
        refused = await browser.api("/objects/books", writer, "POST", json={"pages": 0})
        removed = await browser.api("/objects/books/1", writer, "DELETE")
    assert listing.status_code == 200, listing.text
    body = listing.json()
    assert body["meta"]["limit"] == 10  # per_page
    # default_sort -pages; the book priced 0 is left out by `query`
    assert [book["title"] for book in body["data"]] == ["Long", "Short"]
    assert body["data"][0]["writer"] == {"id": 1, "name": "Anna"}
    assert body["data"][0]["reviews"] == [{"id": 1, "stars": 5, "text": "Good"}]
    assert created.status_code == 201 and created.json()["data"]["title"] == "New"
    assert refused.status_code == 422 and set(refused.json()["details"]) == {"title", "pages"}
    assert removed.status_code == 405  # operations: no delete


async def test_a_many_to_many_relation_loads_in_both_directions(database):
    async with open_site(str(database.url), site_dir=EXAMPLES / "tagged") as browser:
        await database.execute_many(
            "INSERT INTO articles (id, title) VALUES (:id, :title)",
            [{"id": 1, "title": "Typing"}, {"id": 2, "title": "Untagged"}],
        )
        await database.execute("INSERT INTO tags (id, name) VALUES (1, 'python')")
        await database.execute("INSERT INTO article_tags (article_id, tag_id) VALUES (1, 1)")
        token = await browser.create_token("reader", "articles.read,tags.read")
        articles = await browser.api("/objects/articles?with=tags", token)
        tags = await browser.api("/objects/tags?with=articles", token)
    assert [(row["title"], row["tags"]) for row in articles.json()["data"]] == [
        ("Typing", [{"id": 1, "name": "python"}]),
        ("Untagged", []),
    ]
    assert tags.json()["data"] == [{"id": 1, "name": "python", "articles": [{"id": 1, "title": "Typing"}]}]


async def _seed_bookshop(database) -> None:
    """Keys left to the database (1, 2, 3 in a new one), so that a create through the API takes the next."""
    await database.execute("INSERT INTO writers (name) VALUES ('Anna')")
    books = [
        ("Short", "poetry", "9.50", 80, date(2024, 3, 1)),
        ("Long", "novel", "19.99", 640, date(2025, 9, 12)),
        ("Free", "novel", "0", 300, None),
    ]
    for title, genre, price, pages, released in books:
        await database.execute(
            "INSERT INTO books (title, genre, price, pages, released_on, writer_id)"
            " VALUES (:title, :genre, :price, :pages, :released, 1)",
            {"title": title, "genre": genre, "price": price, "pages": pages, "released": released},
        )
    await database.execute("INSERT INTO reviews (book_id, stars, text) VALUES (2, 5, 'Good')")
