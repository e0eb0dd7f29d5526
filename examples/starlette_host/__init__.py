"""A plain Starlette site (a small bookshop) that embeds the pb_headless API at /api/pb/v1."""
