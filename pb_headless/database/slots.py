"""The names of a prepared statement's values that are not filter values (database/statements.py)."""

LIMIT, OFFSET, SEARCH, AFTER = "limit", "offset", "search", "after"
CURSOR = "cursor"  # (CURSOR, i): the i-th value of a cursor page's position
