"""The system settings store (`service_cors_*` and friends), shared through the database."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import sqlalchemy as sa
from databases import Database

from pb_headless.database.shared_version import bump_version
from pb_headless.tables import DEFAULT_SETTINGS
from pb_headless.tables import settings as settings_table

# Settings are typed by people in an admin form or a shell, so they read `yes`/`on` too; a query
# string's booleans are stricter (`pb_headless.fields.text.FLAG_TRUE_WORDS`: only `true|1`).
SETTING_ON_WORDS = frozenset({"1", "true", "yes", "on"})
SETTING_OFF_WORDS = frozenset({"0", "false", "no", "off"})


def is_on(value: str | None) -> bool:
    """Boolean settings read `1|true|yes|on` (any case) as on; anything else, or missing, is off."""
    return value is not None and value.strip().lower() in SETTING_ON_WORDS


class SettingsStore:
    """Reads and writes system settings; every write moves the shared state version."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def all(self) -> dict[str, str]:
        rows = await self.database.fetch_all(sa.select(settings_table.c.key, settings_table.c.value))
        return {row[0]: row[1] for row in rows}

    async def get(self, key: str) -> str | None:
        query = sa.select(settings_table.c.value).where(settings_table.c.key == key)
        return await self.database.fetch_val(query)

    async def set(self, key: str, value: str) -> None:
        async with self.database.transaction():
            if await self.get(key) is None:
                await self.database.execute(settings_table.insert().values(key=key, value=value))
            else:
                query = settings_table.update().where(settings_table.c.key == key).values(value=value)
                await self.database.execute(query)
            await bump_version(self.database)

    async def delete(self, key: str) -> None:
        async with self.database.transaction():
            await self.database.execute(settings_table.delete().where(settings_table.c.key == key))
            await bump_version(self.database)


# -- checking values ---------------------------------------------------------------------------
# The administration settings page and `pb-headless settings set` both check values here, so a
# value one of them refuses can never be stored through the other.

SettingCheck = Callable[[str], str | None]

# Browsers send `Origin` as scheme://host[:port], never with a path; CORS only concerns http(s).
_EXACT_ORIGIN = re.compile(r"https?://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?")
_WILDCARD_ORIGIN = re.compile(r"https?://\*\.[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?")
_TOKEN = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
_PATH_GLOB = re.compile(r"[^\s,]+")


def setting_items(value: str) -> list[str]:
    """The items of a comma-separated setting, without blanks."""
    return [item.strip() for item in value.split(",") if item.strip()]


def _check_origins(value: str) -> str | None:
    for origin in setting_items(value):
        if origin != "*" and not (_EXACT_ORIGIN.fullmatch(origin) or _WILDCARD_ORIGIN.fullmatch(origin)):
            return (
                f"“{origin}” is not an origin a browser sends: use http:// or https:// with a host and no "
                "path, such as https://app.example.com, https://*.example.com for its subdomains, or *"
            )
    return None


def _check_list(pattern: re.Pattern[str], what: str) -> SettingCheck:
    def check(value: str) -> str | None:
        bad = [item for item in setting_items(value) if not pattern.fullmatch(item)]
        return f"'{bad[0]}' is not a valid {what}" if bad else None

    return check


def _check_max_age(value: str) -> str | None:
    return None if value.isdigit() and len(value) <= 9 else "the preflight cache is a whole number of seconds"


def _check_switch(value: str) -> str | None:
    if value.strip().lower() in SETTING_ON_WORDS | SETTING_OFF_WORDS:
        return None
    return f"'{value}' is not on or off: use yes or no (also 1/0, true/false, on/off)"


def _check_days(value: str) -> str | None:
    if value.isdigit() and 1 <= int(value) <= 36500:
        return None
    return "the retention is a whole number of days, at least 1"


SETTING_CHECKS: Mapping[str, SettingCheck] = {
    "service_cors_origins": _check_origins,
    "service_cors_paths": _check_list(_PATH_GLOB, "path pattern"),
    "service_cors_methods": _check_list(_TOKEN, "HTTP method"),
    "service_cors_headers": _check_list(_TOKEN, "header name"),
    "service_cors_credentials": _check_switch,
    "service_cors_max_age": _check_max_age,
    "service_webhooks_allow_private": _check_switch,
    "service_changes_retention_days": _check_days,
}


_LISTS = frozenset(
    {"service_cors_origins", "service_cors_paths", "service_cors_methods", "service_cors_headers"}
)


class SettingError(ValueError):
    """A setting that does not exist, or a value its check refuses; the message says which."""


def checked_setting(key: str, value: str) -> str:
    """The value as it is stored (lists without blanks, switches as yes/no), or SettingError."""
    check = SETTING_CHECKS.get(key)
    if check is None or key not in DEFAULT_SETTINGS:
        known = ", ".join(sorted(DEFAULT_SETTINGS))
        raise SettingError(f"unknown setting '{key}': the settings are {known}")
    normal = ",".join(setting_items(value)) if key in _LISTS else value.strip()
    problem = check(normal)
    if problem:
        raise SettingError(f"{key}: {problem}")
    if check is _check_switch:
        return "yes" if is_on(normal) else "no"
    return normal
