"""POSTs that a client may safely send twice: the answers kept per token and Idempotency-Key
(docs/caching.md). `store` holds the claim and the kept answers; `requests` runs a POST under a key."""
