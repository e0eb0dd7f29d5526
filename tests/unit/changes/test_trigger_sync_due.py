"""`TriggerSync.due`: the plain check a request makes before following the catalog (changes/sync.py)."""

from __future__ import annotations

import time

from pb_headless.changes.sync import TriggerSync


def test_due_only_when_the_version_moved_or_pruning_may_be_due() -> None:
    hub = TriggerSync(None)  # type: ignore[arg-type]  # the check reads no log
    version = object()
    assert hub.due(version)  # never followed yet
    hub._synced = version
    assert not hub.due(version)
    assert hub.due(object())  # the catalog version moved
    hub._next_prune = time.monotonic() - 1.0
    assert hub.due(version)  # pruning may be due


def test_a_hub_without_the_change_log_is_never_due() -> None:
    hub = TriggerSync(None, enabled=False)  # type: ignore[arg-type]
    hub._next_prune = 0.0
    assert not hub.due(object())
