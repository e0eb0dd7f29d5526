"""The database layer: dialect facts, errors, transactions, the time limit, prepared statements."""
