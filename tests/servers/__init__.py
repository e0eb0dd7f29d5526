"""Real services for tests: a shared Redis, private redis-server and uvicorn processes."""
