"""What every instance shares through the database: a version counter, and the snapshot of compiled
state (catalog, settings, live tokens) each instance builds once per version.

Only the version is imported here; `pb_headless.state.snapshot` imports the registry and settings,
which themselves bump the version.
"""

from pb_headless.state.version import bump_data_version, bump_version, read_data_version, read_version

__all__ = ["bump_data_version", "bump_version", "read_data_version", "read_version"]
