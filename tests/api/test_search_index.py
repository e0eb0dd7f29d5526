"""`search` on a SQLite constructor table goes through its trigram index (docs/performance.md, "The
search index on SQLite"), and answers exactly as `str.casefold` says: for text the index folds
otherwise (ß, ligatures, İ, Cherokee), for short terms, for writes made by the API and by other
programs, in both key orders, with filters, totals and deep pages."""

from __future__ import annotations

import sqlite3

import pytest

from pb_headless.constructor import (
    ApiTab,
    ApiTabStore,
    ConstructorField,
    ConstructorTable,
    create_table,
)
from pb_headless.constructor.indexes import drop_indexes_on
from pb_headless.database.sqlite.trigrams import exotic_characters, exotic_glob, match_query
from tests.support.constructor import constructor_host

POSTS = ConstructorTable(
    "posts",
    "Posts",
    (
        ConstructorField("title", "string", searchable=True, length=200),
        ConstructorField("body", "text", searchable=True),
        ConstructorField("rank", "integer"),
    ),
)
TAB = ApiTab(
    enabled=True,
    fields=("title", "body", "rank"),
    operations=("list", "show", "create", "update", "delete"),
    writable=("title", "body", "rank", "published"),
    filterable=("rank",),
    sortable=("id", "rank"),
)
URL = "/api/pb/v1/objects/posts"

TEXTS = [
    ("Straße am See", "plain"),
    ("STRASSE", "upper ascii"),
    ("ﬁsh and chips", "a ligature"),
    ("fish", "no ligature"),
    ("İstanbul", "dotted capital"),
    ("ᏕᏥᎧᎢ", "cherokee capitals"),
    ("ꮵꮵꮵ", "cherokee small"),
    ("Привет МИР", "cyrillic"),
    ("ΣΊΣΥΦΟΣ", "greek"),
    ("100% _sure_", "like characters"),
    ('say "hi" now', "quotes"),
    (None, "no title"),
]
TERMS = [
    "strasse", "straße", "STRAẞE", "fis", "fi", "ﬁsh", "istan", "i̇stan", "ᏕᏥ", "ꮵꮵ", "ᏥᏥᏥ",
    "ꮵꮵꮵ", "мир", "σίσυφος", "0% _", '"hi"', "plain", "o", "xyz", "ss am", "chips",
]  # fmt: skip


def expected(rows, terms):
    found = []
    for row in rows:
        texts = [text.casefold() for text in (row["title"], row["body"]) if text is not None]
        if all(any(term.casefold() in text for text in texts) for term in terms):
            found.append(row["id"])
    return found


@pytest.fixture
async def site(sqlite_database, host_factory):
    tables = [POSTS]  # what the host's loader gives: a test may change a definition
    host = await constructor_host(sqlite_database, host_factory, POSTS, TAB, tables=tables)
    host.tables = tables
    for rank, (title, body) in enumerate(TEXTS):
        created = await host.client.post(
            URL, headers=host.headers, json={"title": title, "body": body, "rank": rank}
        )
        assert created.status_code == 201, created.text
    return host


async def rows_of(site):
    table = await site.database.fetch_all("SELECT id, title, body FROM posts WHERE published ORDER BY id")
    return [dict(row._mapping) for row in table]


async def ids_for(site, query):
    response = await site.client.get(f"{URL}?{query}", headers=site.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    return [record["id"] for record in body["data"]], body["meta"]["total"]


async def index_parts(database):
    """The FTS5 tables and triggers of the posts' search index, as (kind, last three letters)."""
    rows = await database.fetch_all(
        "SELECT type, name FROM sqlite_master WHERE name GLOB 'pbfts_posts_*' AND "
        "(type = 'trigger' OR sql GLOB 'CREATE VIRTUAL TABLE*')"
    )
    return sorted((str(row[0]), str(row[1])[-3:]) for row in rows)


async def test_publishing_makes_the_index_and_its_triggers(site):
    parts = await index_parts(site.database)
    kinds = [kind for kind, _ in parts]
    assert kinds.count("trigger") == 3 and "table" in kinds
    assert {suffix for kind, suffix in parts if kind == "trigger"} == {"_ai", "_ad", "_au"}
    assert (await ids_for(site, "search=fish"))[0] == [3, 4]
    # The answer comes through the index: emptied, it gives no candidate (a table scan would).
    (name,) = [row[0] for row in await site.database.fetch_all(
        "SELECT name FROM sqlite_master WHERE name GLOB 'pbfts_posts_*' AND sql GLOB 'CREATE VIRTUAL*'"
    )]  # fmt: skip
    await site.database.execute(f'INSERT INTO "{name}"("{name}") VALUES (\'delete-all\')')
    # Written another way: the index is no table an object publishes, so emptying it moves no tag,
    # and `search=fish` itself would be the answer kept with its tag (docs/caching.md).
    assert (await ids_for(site, "search=fish&count=exact"))[0] == []
    assert (await ids_for(site, "search=fi"))[0] == [3, 4]  # too short to narrow: read from the table


@pytest.mark.parametrize("term", TERMS)
async def test_every_term_finds_what_casefold_finds(site, term):
    rows = await rows_of(site)
    want = expected(rows, term.split())  # a search is its words, each of which must be found
    found, total = await ids_for(site, f"search={_quoted(term)}")
    assert found == want
    assert total == len(want)
    backwards, _ = await ids_for(site, f"search={_quoted(term)}&sort=-id")
    assert backwards == list(reversed(want))


async def test_several_terms_a_filter_and_another_order(site):
    rows = await rows_of(site)
    want = expected(rows, ["str", "am"])
    found, total = await ids_for(site, "search=str%20am")
    assert found == want and total == len(want) == 1
    by_rank, _ = await ids_for(site, "search=fis&sort=-rank")
    assert sorted(by_rank) == expected(rows, ["fis"]) and len(by_rank) == 2
    filtered, total = await ids_for(site, "search=fis&filter[rank][gte]=3")
    assert filtered == [4] and total == 1


async def test_writes_by_the_api_and_by_another_program_are_found_at_once(site):
    path = site.database.url.database
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("INSERT INTO posts (title, body, rank, published) VALUES ('Maß', 'outside', 50, 1)")
        other.execute("UPDATE posts SET title = 'renamed' WHERE title = 'fish'")
        other.execute("DELETE FROM posts WHERE title = 'STRASSE'")
    finally:
        other.close()
    rows = await rows_of(site)
    for term in ("mass", "fish", "renamed", "strasse", "outside"):
        found, total = await ids_for(site, f"search={term}")
        assert found == expected(rows, [term]), term
        assert total == len(found)
    created = await site.client.post(URL, headers=site.headers, json={"title": "ﬂower", "rank": 60})
    new_id = created.json()["data"]["id"]
    assert (await ids_for(site, "search=flow"))[0] == [new_id]
    await site.client.patch(f"{URL}/{new_id}", headers=site.headers, json={"title": "tree"})
    assert (await ids_for(site, "search=flow"))[0] == []
    assert (await ids_for(site, "search=tre"))[0] == [new_id]
    await site.client.delete(f"{URL}/{new_id}", headers=site.headers)
    assert (await ids_for(site, "search=tre"))[0] == []


async def test_a_deep_page_of_a_search(site):
    values = ", ".join(f"('needle {n}', 'x', {100 + n}, 1)" for n in range(1200))
    await site.database.execute(f"INSERT INTO posts (title, body, rank, published) VALUES {values}")
    response = await site.client.get(f"{URL}?search=NEEDLE&limit=5&offset=1100", headers=site.headers)
    body = response.json()
    assert body["meta"]["total"] == 1200
    assert [record["title"] for record in body["data"]] == [f"needle {n}" for n in range(1100, 1105)]
    response = await site.client.get(
        f"{URL}?search=NEEDLE&limit=3&offset=1100&sort=-id", headers=site.headers
    )
    assert [record["title"] for record in response.json()["data"]] == [f"needle {n}" for n in (99, 98, 97)]


async def test_a_table_made_again_gets_its_index_made_again(site):
    database = site.database
    await database.execute("DROP TABLE posts")  # its triggers go with it; the FTS table stays behind
    await create_table(database, POSTS)
    await database.execute("INSERT INTO posts (title, body, rank, published) VALUES ('again', 'x', 1, 1)")
    await ApiTabStore(database).save(POSTS.name, TAB)  # a new version: the table is published again
    assert (await ids_for(site, "search=agai"))[0] == [1]
    assert len(await index_parts(database)) == 4  # a fresh FTS table and three triggers, nothing stale


async def test_dropping_a_column_drops_the_index_and_publishing_remakes_it(site):
    database = site.database
    await drop_indexes_on(database, "posts", "body")
    assert await index_parts(database) == []
    await database.execute("ALTER TABLE posts DROP COLUMN body")  # refused while a trigger names it
    site.tables[0] = ConstructorTable("posts", "Posts", POSTS.fields[:1] + POSTS.fields[2:])
    await ApiTabStore(database).save("posts", ApiTab(enabled=True, fields=("title", "rank")))
    rows = await database.fetch_all("SELECT id, title FROM posts ORDER BY id")
    assert (await ids_for(site, "search=fish"))[0] == [
        row[0] for row in rows if "fish" in (row[1] or "").casefold()
    ]
    assert (await ids_for(site, "search=fish"))[0] == [3, 4]  # "ﬁsh" folds to "fish"
    assert len(await index_parts(database)) == 4


def test_the_exotic_characters_are_exactly_those_the_glob_finds():
    connection = sqlite3.connect(":memory:")
    exotic = set(exotic_characters())
    assert {"ß", "İ", "ﬁ", "ꭰ"} <= exotic
    assert not exotic & set("abcdefghijklmnopqrstuvwxyzабвгдеж")
    pattern = exotic_glob()
    for point in range(0x80, 0x1F000):
        if 0xD800 <= point < 0xE000:
            continue
        character = chr(point)
        (found,) = connection.execute("SELECT ? GLOB ?", (f"a{character}b", pattern)).fetchone()
        assert bool(found) == (character in exotic), hex(point)


def test_the_match_query_narrows_by_long_terms_only():
    assert match_query(["ab", "x"]) is None
    assert match_query(["Lorem"]) == '("lor" AND "ore" AND "rem") OR "\ufdd0\ufdd0\ufdd0"'
    assert match_query(['a"b', "ab"]) == '("a""b") OR "\ufdd0\ufdd0\ufdd0"'
    assert match_query(["STRAẞE"]).startswith('("str" AND "tra" AND "ras" AND "ass" AND "sse")')


def _quoted(term: str) -> str:
    from urllib.parse import quote

    return quote(term, safe="")
