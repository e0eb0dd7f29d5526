"""`pb-headless settings set|unset`: checked exactly as the administration settings page checks them."""

from __future__ import annotations

import json

import pytest

from pb_headless.tables import DEFAULT_SETTINGS
from tests.cli.console import assert_refused, run
from tests.site.harness import open_site
from tests.support.databases import URLS, open_database

# Each refused the same way by the page and the console; the fragment is in both messages.
BAD_VALUES = [
    ("service_cors_origins", "example.com", "is not an origin"),
    ("service_cors_origins", "https://a.example/path", "is not an origin"),
    ("service_cors_origins", "https://a.example/", "is not an origin"),
    ("service_cors_origins", "ftp://files.example.com", "is not an origin"),
    ("service_cors_origins", "chrome-extension://abcdef", "is not an origin"),
    ("service_cors_max_age", "a day", "whole number of seconds"),
    ("service_cors_max_age", "-5", "whole number of seconds"),
    ("service_cors_max_age", "1e3", "whole number of seconds"),
    ("service_cors_methods", "GET, PO ST", "not a valid HTTP method"),
    ("service_cors_headers", "X-Good, bad header", "not a valid header name"),
]


@pytest.fixture
def installed(tmp_path):
    url = f"sqlite:///{tmp_path}/settings.db"
    assert run("install", database=url).returncode == 0
    return url


def stored(url: str) -> dict[str, str]:
    result = run("settings", "list", "--json", database=url)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(("key", "value", "fragment"), BAD_VALUES)
def test_a_value_the_settings_page_refuses_is_refused_and_nothing_is_stored(installed, key, value, fragment):
    line = assert_refused(run("settings", "set", key, value, database=installed), fragment)
    assert key in line
    assert stored(installed) == DEFAULT_SETTINGS


def test_an_unknown_key_is_refused_with_the_list_of_settings(installed):
    line = assert_refused(run("settings", "set", "service_cors_colour", "red", database=installed), "unknown")
    assert "service_cors_origins" in line and "service_cors_max_age" in line
    assert "service_cors_colour" not in stored(installed)


def test_values_are_stored_as_the_page_stores_them(installed):
    origins = run(
        "settings",
        "set",
        "service_cors_origins",
        " https://a.example , https://*.b.example:8443 ,",
        database=installed,
    )
    assert origins.returncode == 0, origins.stderr
    assert run("settings", "set", "service_cors_credentials", "On", database=installed).returncode == 0
    assert run("settings", "set", "service_cors_max_age", "600", database=installed).returncode == 0
    values = stored(installed)
    assert values["service_cors_origins"] == "https://a.example,https://*.b.example:8443"
    assert values["service_cors_credentials"] == "yes"
    assert values["service_cors_max_age"] == "600"
    assert_refused(
        run("settings", "set", "service_cors_credentials", "maybe", database=installed), "yes or no"
    )


def test_an_empty_origins_value_turns_cors_off(installed):
    run("settings", "set", "service_cors_origins", "https://a.example", database=installed)
    assert run("settings", "set", "service_cors_origins", database=installed).returncode == 0
    assert stored(installed)["service_cors_origins"] == ""


def test_unset_removes_a_setting_so_its_default_applies_and_says_so_when_there_is_none(installed):
    result = run("settings", "unset", "service_cors_max_age", database=installed)
    assert result.returncode == 0, result.stderr
    assert "default" in result.stdout
    assert "service_cors_max_age" not in stored(installed)
    assert_refused(run("settings", "unset", "service_cors_max_age", database=installed), "no setting")


def test_get_of_a_known_setting_with_no_stored_row_prints_its_default(installed):
    assert run("settings", "unset", "service_cors_max_age", database=installed).returncode == 0
    result = run("settings", "get", "service_cors_max_age", database=installed)
    assert (result.returncode, result.stdout, result.stderr) == (0, "86400\n", "")


def test_get_of_an_unknown_key_is_refused_with_the_list_of_settings(installed):
    line = assert_refused(run("settings", "get", "service_cors_maxage", database=installed), "no setting")
    assert "service_cors_max_age" in line


async def test_the_administration_page_refuses_the_same_values(sqlite_database):
    page_path = "/mgr/pb/settings/cors"
    base = {key: value for key, value in DEFAULT_SETTINGS.items() if key != "service_cors_credentials"}
    async with open_site(str(sqlite_database.url)) as browser:
        for key, value, fragment in BAD_VALUES:
            page = await browser.submit(page_path, {**base, key: value}, form_page=page_path)
            assert page.status_code == 422, (key, value)
            assert fragment in page.text, (key, value)


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
async def test_set_and_unset_work_on_the_server_databases(kind, tmp_path):
    async with open_database(kind, tmp_path):
        url = URLS[kind]
        assert (
            run("settings", "set", "service_cors_origins", "https://app.example.com", database=url).returncode
            == 0
        )
        assert (
            run("settings", "get", "service_cors_origins", database=url).stdout.strip()
            == "https://app.example.com"
        )
        assert_refused(
            run("settings", "set", "service_cors_origins", "https://app.example.com/x", database=url)
        )
        assert run("settings", "unset", "service_cors_origins", database=url).returncode == 0
        stored = run("settings", "get", "service_cors_max_age", database=url).stdout
        assert run("settings", "unset", "service_cors_max_age", database=url).returncode == 0
        assert run("settings", "get", "service_cors_max_age", database=url).stdout == stored == "86400\n"
