"""The library's own tables across releases: Alembic revisions in versions/, and what runs them.

`migrate.upgrade` brings a database to this release's tables under a database lock, `migrate.check`
is the start-up check, `runner` runs the steps; docs/upgrading.md tells a site owner how to use them.
"""
