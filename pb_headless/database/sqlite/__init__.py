"""SQLite's own parts: kept-open connections, loop reads, its data version, the trigram index."""
