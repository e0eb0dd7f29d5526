"""The pb_headless example site: a small Starlette content site with the API at /api/pb/v1.

Run it with `python -m examples.site quickstart` (see docs/example-site.md).
"""
