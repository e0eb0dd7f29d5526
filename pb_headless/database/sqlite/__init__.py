"""SQLite's own parts: kept-open connections, loop reads, noted positions, the trigram index."""
