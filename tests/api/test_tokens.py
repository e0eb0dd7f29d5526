"""docs/authentication.md through TokenStore, on every database."""

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from pb_headless import TokenError, TokenStore
from pb_headless.tables import tokens as tokens_table
from pb_headless.tokens import hash_token


async def stored_rows(database):
    return [dict(row._mapping) for row in await database.fetch_all(tokens_table.select())]


async def test_create_returns_the_plain_value_once_and_stores_only_its_hash(database):
    store = TokenStore(database)
    info, plain = await store.create("mobile", "articles.read")
    assert plain.startswith("pb_")
    [row] = await stored_rows(database)
    assert row["token_hash"] == hash_token(plain)
    assert plain not in {str(value) for value in row.values()}
    assert info.prefix == plain[:8]
    assert "token_hash" not in info.as_dict() and plain not in str(info.as_dict())


async def test_lookup_finds_the_token_by_its_plain_value(database):
    store = TokenStore(database)
    _, plain = await store.create("mobile", ["articles.read", "news.*"])
    found = await store.lookup(plain)
    assert found is not None and found.name == "mobile" and found.scopes == ("articles.read", "news.*")
    other_last = "y" if plain.endswith("x") else "x"  # a changed value, whatever the token ends with
    assert await store.lookup(plain[:-1] + other_last) is None


async def test_reissue_keeps_everything_but_the_value(database):
    store = TokenStore(database)
    expiry = datetime.now(UTC) + timedelta(days=3)
    before, old = await store.create("app", "a.read,b.*", expires_at=expiry, user_id=7)
    after, new = await store.reissue("app")
    assert new != old
    assert await store.lookup(old) is None
    assert (await store.lookup(new)).name == "app"
    for attribute in ("name", "scopes", "user_id", "enabled"):
        assert getattr(after, attribute) == getattr(before, attribute)
    assert abs((after.expires_at - expiry).total_seconds()) < 1


async def test_disable_keeps_the_row_and_enable_brings_it_back(database):
    store = TokenStore(database)
    await store.create("app", "a.read")
    assert (await store.disable("app")).enabled is False
    assert len(await stored_rows(database)) == 1
    assert (await store.enable("app")).enabled is True


async def test_names_are_unique(database):
    store = TokenStore(database)
    await store.create("app", "a.read")
    with pytest.raises(TokenError, match="already exists"):
        await store.create("app", "b.read")
    assert len(await stored_rows(database)) == 1


@pytest.mark.parametrize("scopes", ["", " , ", "Articles.read", "articles", "a.b.c", "*.read"])
async def test_a_token_needs_well_formed_scopes(database, scopes):
    with pytest.raises(TokenError):
        await TokenStore(database).create("app", scopes)
    assert await stored_rows(database) == []


@pytest.mark.parametrize("expiry", ["2001-01-01T00:00:00Z", "yesterday", "2026-13-01"])
async def test_an_expiry_in_the_past_or_malformed_is_refused(database, expiry):
    with pytest.raises(TokenError):
        await TokenStore(database).create("app", "a.read", expires_at=expiry)
    assert await stored_rows(database) == []


async def test_an_expiry_without_an_offset_is_utc(database):
    naive = (datetime.now(UTC) + timedelta(days=2)).replace(tzinfo=None, microsecond=0)
    info, _ = await TokenStore(database).create("app", "a.read", expires_at=naive.isoformat())
    assert info.expires_at == naive.replace(tzinfo=UTC)


async def test_last_used_is_written_at_most_once_a_minute(database):
    store = TokenStore(database)
    info, _ = await store.create("app", "a.read")
    first = datetime.now(UTC).replace(microsecond=0)
    await store.touch(info, first)
    await store.touch(await store.get("app"), first + timedelta(seconds=30))
    assert (await store.get("app")).last_used_at == first
    await store.touch(await store.get("app"), first + timedelta(seconds=61))
    assert (await store.get("app")).last_used_at == first + timedelta(seconds=61)


async def test_every_change_moves_the_shared_version(database):
    from pb_headless.state import read_version

    store = TokenStore(database)
    start = await read_version(database)
    await store.create("app", "a.read")
    await store.disable("app")
    await store.reissue("app")
    assert await read_version(database) == start + 3


async def test_unknown_names_are_refused(database):
    store = TokenStore(database)
    for action in (store.reissue, store.disable, store.enable, store.delete):
        with pytest.raises(TokenError, match="no token named"):
            await action("ghost")
    count = await database.fetch_val(sa.select(sa.func.count()).select_from(tokens_table))
    assert count == 0
