"""The revision files of the library's tables, one per change, in Alembic's form (docs/upgrading.md)"""
