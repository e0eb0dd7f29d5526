"""Writes apply the model's own defaults as SQLAlchemy would (docs/writes.md "Defaults"), and a
refusal of the database is a 422 only when the client's values caused it (docs/errors.md), on every
database.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of

API = "/api/pb/v1/objects"


class Base(DeclarativeBase):
    pass


def slug_of(context) -> str:
    """A context-sensitive default, as SQLAlchemy documents them: it reads the row's other values."""
    return context.get_current_parameters()["title"].lower().replace(" ", "-")


class Note(Base):
    __tablename__ = "df_notes"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(sa.String(100))
    views: Mapped[int] = mapped_column(default=0)  # NOT NULL, a scalar default only Python knows
    token: Mapped[str] = mapped_column(sa.String(40), default=lambda: "tk-" + "x" * 8)
    slug: Mapped[str] = mapped_column(sa.String(120), default=slug_of)
    status: Mapped[str] = mapped_column(sa.String(20), server_default="draft")
    changed: Mapped[str] = mapped_column(sa.String(20), default="never", onupdate="edited")
    edits: Mapped[int] = mapped_column(default=0, onupdate=lambda context: 1)
    created_at: Mapped[datetime] = mapped_column(default=sa.func.current_timestamp())


NOTES = {
    "model": Note,
    "fields": ["title", "views", "token", "slug", "status", "changed", "edits", "created_at"],
    "operations": ["list", "show", "create", "update"],
    "writable": ["title"],
}

# A model that disagrees with its table: the table says NOT NULL where the model does not.
drift = sa.Table(
    "df_drift",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(100), nullable=False),
    sa.Column("code", sa.String(20), nullable=True),
)
drift_in_database = sa.Table(
    "df_drift",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(100), nullable=False),
    sa.Column("code", sa.String(20), nullable=False),
)
# A constraint over two fields: when it fails, no one field is to blame.
ranges = sa.Table(
    "df_ranges",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("low", sa.Integer, nullable=False),
    sa.Column("high", sa.Integer, nullable=False),
    sa.CheckConstraint("low <= high", name="ck_df_ranges_order"),
)


@pytest.fixture
async def host(database, host_factory):
    dialect = dialect_of(database)
    for table in (Note.__table__, drift_in_database, ranges):
        await database.execute(str(CreateTable(table).compile(dialect=dialect)))
    registry = ApiRegistry()
    registry.register("notes", NOTES)
    registry.register(
        "drift",
        {"model": drift, "fields": ["title", "code"], "operations": ["create"], "writable": ["title"]},
    )
    registry.register(
        "ranges",
        {
            "model": ranges,
            "fields": ["low", "high"],
            "operations": ["list", "create"],
            "writable": ["low", "high"],
        },
    )
    host = await host_factory(database, registry)
    host.headers = host.auth(await host.token("*"))
    return host


async def test_a_create_fills_scalar_callable_sql_and_server_defaults(host):
    response = await host.client.post(API + "/notes", headers=host.headers, json={"title": "Hello World"})
    assert response.status_code == 201, response.text
    record = response.json()["data"]
    created_at = record.pop("created_at")
    assert record == {
        "id": 1,
        "title": "Hello World",
        "views": 0,
        "token": "tk-xxxxxxxx",
        "slug": "hello-world",
        "status": "draft",
        "changed": "never",
        "edits": 0,
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*", created_at)
    stored = await host.database.fetch_one(sa.select(Note.__table__))
    assert (stored.views, stored.slug, stored.status) == (0, "hello-world", "draft")


async def test_an_update_applies_onupdate_to_the_columns_it_does_not_send(host):
    await host.client.post(API + "/notes", headers=host.headers, json={"title": "First"})
    response = await host.client.patch(API + "/notes/1", headers=host.headers, json={"title": "Second"})
    assert response.status_code == 200, response.text
    record = response.json()["data"]
    assert (record["title"], record["changed"], record["edits"]) == ("Second", "edited", 1)
    assert record["slug"] == "first"  # a default is for creates only


async def test_an_empty_update_changes_nothing_not_even_onupdate_columns(host):
    await host.client.post(API + "/notes", headers=host.headers, json={"title": "First"})
    response = await host.client.patch(API + "/notes/1", headers=host.headers, json={})
    assert response.status_code == 200
    assert (response.json()["data"]["changed"], response.json()["data"]["edits"]) == ("never", 0)


async def test_a_refusal_the_client_did_not_cause_is_a_500_with_a_request_id(host, caplog):
    caplog.set_level(logging.ERROR, logger="pb_headless")
    response = await host.client.post(API + "/drift", headers=host.headers, json={"title": "x"})
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == "server_error" and re.fullmatch(r"[0-9a-f]{16}", body["request_id"])
    assert "code" not in body["message"] and "NULL" not in body["message"].upper()
    assert await host.database.fetch_val(sa.select(sa.func.count()).select_from(drift)) == 0
    assert body["request_id"] in caplog.text


async def test_a_conflict_of_the_body_as_a_whole_is_a_422_under_the_key_body_in_brackets(host):
    response = await host.client.post(API + "/ranges", headers=host.headers, json={"low": 5, "high": 1})
    assert response.status_code == 422, response.text
    assert response.json()["details"] == {"(body)": ["The value conflicts with the database's constraints."]}
    assert await host.database.fetch_val(sa.select(sa.func.count()).select_from(ranges)) == 0
    fine = await host.client.post(API + "/ranges", headers=host.headers, json={"low": 1, "high": 5})
    assert fine.status_code == 201
