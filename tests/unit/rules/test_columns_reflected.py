"""Columns as reflection reports them, not as a model declares them."""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from pb_headless.rules import compile_rules


def test_a_reflected_mariadb_boolean_is_a_boolean():
    table = sa.Table(
        "t",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("flag", mysql.TINYINT(display_width=1), nullable=True),
    )
    validator = compile_rules("t", {c.name: c for c in table.columns}, ["flag"], {"flag": "boolean"})
    assert validator.validate({"flag": True}, partial=False).values == {"flag": True}
    assert validator.validate({"flag": 1}, partial=False).errors


def test_a_wider_tinyint_stays_an_integer():
    table = sa.Table(
        "t",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("level", mysql.TINYINT(display_width=4), nullable=True),
    )
    validator = compile_rules("t", {c.name: c for c in table.columns}, ["level"], {})
    assert validator.validate({"level": 3}, partial=False).values == {"level": 3}
