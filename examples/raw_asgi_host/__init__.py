"""A site written as a bare ASGI callable (no framework) that embeds the pb_headless API at /api/pb/v1."""
