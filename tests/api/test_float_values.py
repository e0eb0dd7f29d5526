"""A float column renders as a JSON number on every database (docs/query.md, "Values in answers"),
whether declared with SQLAlchemy or reflected from a table published by name: MariaDB reflects
REAL, DOUBLE and FLOAT as types that read back as Decimal, which must not come out as text."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of

COLUMNS = ("as_real", "as_double", "as_float")
KEY_AND_DOUBLE = {
    "sqlite": ("INTEGER PRIMARY KEY", "DOUBLE"),
    "postgresql": ("SERIAL PRIMARY KEY", "DOUBLE PRECISION"),
    "mysql": ("INTEGER AUTO_INCREMENT PRIMARY KEY", "DOUBLE"),
}
declared = sa.Table(
    "float_declared",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("as_real", sa.REAL),
    sa.Column("as_double", sa.Double),
    sa.Column("as_float", sa.Float),
)


async def _create_tables(database) -> None:
    dialect = dialect_of(database)
    await database.execute(str(sa.schema.CreateTable(declared).compile(dialect=dialect)))
    key, double = KEY_AND_DOUBLE[database.url.dialect]
    await database.execute(
        f"CREATE TABLE float_reflected (id {key}, as_real REAL, as_double {double}, as_float FLOAT)"
    )
    for table in ("float_declared", "float_reflected"):
        await database.execute(
            f"INSERT INTO {table} (as_real, as_double, as_float) VALUES (2.5, -0.125, 3)"  # id 1
        )


@pytest.fixture
async def floats(database, host_factory):
    await _create_tables(database)
    registry = ApiRegistry()
    common = {"fields": list(COLUMNS), "filterable": ["as_double"], "operations": ["list", "show", "create"]}
    common["writable"] = list(COLUMNS)
    registry.register("declared", {"model": declared, **common})
    registry.register("reflected", {"table": "float_reflected", **common})
    host = await host_factory(database, registry)
    host.headers = host.auth(await host.token("*"))
    return host


@pytest.mark.parametrize("name", ["declared", "reflected"])
async def test_real_double_and_float_columns_render_as_numbers(floats, name):
    response = await floats.client.get(f"/api/pb/v1/objects/{name}/1", headers=floats.headers)
    assert response.status_code == 200, response.text
    record = response.json()["data"]
    assert record["as_real"] == 2.5 and record["as_double"] == -0.125 and record["as_float"] == 3
    assert all(isinstance(record[column], float) for column in COLUMNS), record


@pytest.mark.parametrize("name", ["declared", "reflected"])
async def test_a_written_float_is_answered_and_listed_as_a_number(floats, name):
    body = {"as_real": 0.75, "as_double": 1e-3, "as_float": -4.5}
    created = await floats.client.post(f"/api/pb/v1/objects/{name}", headers=floats.headers, json=body)
    assert created.status_code == 201, created.text
    assert {column: created.json()["data"][column] for column in COLUMNS} == body
    listed = await floats.client.get(
        f"/api/pb/v1/objects/{name}?filter[as_double]=-0.125", headers=floats.headers
    )
    assert listed.status_code == 200, listed.text
    assert [record["as_double"] for record in listed.json()["data"]] == [-0.125]
