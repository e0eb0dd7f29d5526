"""A table whose updates the database refuses for a while: a failure injected inside a write's own
transaction, after its row was written and before its COMMIT (docs/writes.md: nothing is stored)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from databases import Database


@contextlib.asynccontextmanager
async def updates_refused(database: Database, table: str, where_id: int | None = None) -> AsyncIterator[None]:
    """While the block runs, every UPDATE of `table` (of its row `where_id` only, when given) fails
    with "injected failure"; the trigger that does it is dropped afterwards."""
    dialect = database.url.dialect
    name = f"test_refuse_{table}"
    if dialect == "sqlite":
        when = "" if where_id is None else f"WHEN NEW.id = {where_id} "
        refuse = "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        made = [f"CREATE TRIGGER {name} BEFORE UPDATE ON {table} {when}{refuse}"]
        dropped = [f"DROP TRIGGER {name}"]
    elif dialect == "mysql":
        test = "TRUE" if where_id is None else f"NEW.id = {where_id}"
        made = [
            f"CREATE TRIGGER {name} BEFORE UPDATE ON {table} FOR EACH ROW BEGIN IF {test} THEN "
            "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure'; END IF; END"
        ]
        dropped = [f"DROP TRIGGER {name}"]
    else:
        test = "TRUE" if where_id is None else f"NEW.id = {where_id}"
        made = [
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN IF {test} THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$",
            f"CREATE TRIGGER {name} BEFORE UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()",
        ]
        dropped = [f"DROP TRIGGER {name} ON {table}", f"DROP FUNCTION {name}()"]
    for statement in made:
        await database.execute(statement)
    try:
        yield
    finally:
        for statement in dropped:
            await database.execute(statement)
