"""A FastAPI site (a small record shop) that embeds the pb_headless API at /api/pb/v1."""
