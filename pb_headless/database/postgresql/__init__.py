"""PostgreSQL's own parts: the trigram indexes that serve search."""
