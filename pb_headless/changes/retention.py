"""How long the change log keeps its entries: the setting `service_changes_retention_days`
(`ChangeLog.prune` removes older ones; `TriggerSync` runs it once an hour)."""

from __future__ import annotations

from pb_headless.tables import DEFAULT_SETTINGS

SETTING = "service_changes_retention_days"


def retention_days(settings: dict[str, str] | None) -> int:
    value = (settings or {}).get(SETTING, DEFAULT_SETTINGS[SETTING]).strip()
    return int(value) if value.isdigit() and int(value) > 0 else int(DEFAULT_SETTINGS[SETTING])
