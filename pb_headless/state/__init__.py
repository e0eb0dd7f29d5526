"""What every instance shares through the database: a version counter (kept in the database layer,
pb_headless/database/shared_version.py), and the snapshot of compiled state (catalog, settings, live
tokens) each instance builds once per version (`pb_headless.state.snapshot`).
"""

from pb_headless.database.shared_version import (
    bump_data_version,
    bump_version,
    read_data_version,
    read_version,
)

__all__ = ["bump_data_version", "bump_version", "read_data_version", "read_version"]
