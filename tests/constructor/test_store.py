"""API tabs kept in the database, on each database."""

from __future__ import annotations

import pytest

from pb_headless.constructor import ApiTab, ApiTabStore, ConstructorError
from pb_headless.state import read_version
from pb_headless.tables import constructor_api


async def test_a_table_never_saved_has_the_default_switched_off_tab(database):
    assert await ApiTabStore(database).get("news") == ApiTab()
    assert await ApiTabStore(database).all() == {}


async def test_a_saved_tab_reads_back_the_same(database):
    store = ApiTabStore(database)
    tab = ApiTab(
        enabled=True,
        fields=("title", "body"),
        operations=("list", "show", "create"),
        url_name="news",
        writable=("title",),
        filterable=(),
        sortable=("title",),
    )
    await store.save("site_news", tab)
    assert await store.get("site_news") == tab
    assert await store.all() == {"site_news": tab}


async def test_saving_again_replaces_the_tab(database):
    store = ApiTabStore(database)
    await store.save("site_news", ApiTab(enabled=True, fields=("title",)))
    await store.save("site_news", ApiTab(enabled=False, fields=("body",)))
    assert await store.all() == {"site_news": ApiTab(enabled=False, fields=("body",))}


async def test_every_save_and_delete_moves_the_shared_version(database):
    store = ApiTabStore(database)
    before = await read_version(database)
    await store.save("site_news", ApiTab(enabled=True, fields=("title",)))
    await store.save("site_news", ApiTab(enabled=True, fields=("body",)))
    await store.delete("site_news")
    assert await read_version(database) == before + 3
    assert await store.get("site_news") == ApiTab()


async def test_a_table_name_that_is_not_a_sql_name_is_refused(sqlite_database):
    with pytest.raises(ConstructorError, match="table name"):
        await ApiTabStore(sqlite_database).save("bad name", ApiTab())


async def test_a_hand_edited_row_that_no_longer_reads_counts_as_switched_off(sqlite_database, caplog):
    from pb_headless.database.dialect import utcnow

    await sqlite_database.execute(
        constructor_api.insert().values(
            table_name="broken",
            enabled=True,
            fields='["title"]',
            operations='["list","purge"]',
            url_name=None,
            updated_at=utcnow(),
        )
    )
    assert await ApiTabStore(sqlite_database).get("broken") == ApiTab()
    assert "broken" in caplog.text
