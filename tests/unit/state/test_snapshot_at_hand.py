"""`SnapshotCache.at_hand`: the current snapshot without a coroutine, only for its own version."""

from __future__ import annotations

from types import SimpleNamespace

from pb_headless.state.snapshot import Snapshot, SnapshotCache


def test_the_current_snapshot_is_at_hand_for_its_version_alone() -> None:
    registry = SimpleNamespace(version=3)
    cache = SnapshotCache(None, registry)  # type: ignore[arg-type]  # at_hand reads neither's data
    assert cache.at_hand(7) is None  # nothing built yet
    cache._current = snapshot = Snapshot(version=(7, 3), catalog={}, settings={}, live_until=None)
    assert cache.at_hand(7) is snapshot
    assert cache.at_hand(8) is None  # the shared version moved
    registry.version = 4
    assert cache.at_hand(7) is None  # the registry's version moved
