"""pb_headless/cors.py CorsPolicy: the `service_cors_*` settings as docs/cors-and-rate-limits.md reads
them."""

import pytest

from pb_headless.cors import EXPOSED_HEADERS, CorsPolicy
from pb_headless.tables import DEFAULT_SETTINGS


def policy(**settings: str) -> CorsPolicy:
    given = {f"service_cors_{key}": value for key, value in settings.items()}
    return CorsPolicy.from_settings({**DEFAULT_SETTINGS, **given})


def test_the_installer_defaults_leave_cors_off():
    assert not CorsPolicy.from_settings(DEFAULT_SETTINGS).enabled


def test_missing_settings_read_as_off():
    assert not CorsPolicy.from_settings({}).enabled


def test_blank_and_comma_only_origins_are_off():
    assert not policy(origins=" , ,").enabled


def test_exact_origins_are_compared_whole():
    cors = policy(origins="https://app.example.com, http://localhost:3000/")
    assert cors.is_allowed_origin("https://app.example.com")
    assert cors.is_allowed_origin("http://localhost:3000")
    assert not cors.is_allowed_origin("https://app.example.com.evil.net")
    assert not cors.is_allowed_origin("http://app.example.com")
    assert not cors.is_allowed_origin("https://app.example.com:8443")
    assert not cors.is_allowed_origin("http://localhost:30000")


def test_origins_compare_without_regard_to_case():
    assert policy(origins="https://App.Example.com").is_allowed_origin("https://app.example.COM")


@pytest.mark.parametrize(
    "origin", ["https://a.example.com", "https://a.b.c.example.com", "https://x-1.example.com"]
)
def test_a_subdomain_pattern_matches_any_depth(origin):
    assert policy(origins="https://*.example.com").is_allowed_origin(origin)


@pytest.mark.parametrize(
    "origin",
    [
        "https://example.com",
        "https://evil-example.com",
        "https://evilexample.com",
        "https://a.example.com.evil.net",
        "http://a.example.com",
        "https://a.example.com:8443",
        "https://.example.com",
        "https://a..example.com",
        "https://a.example.comx",
        "https://a_b.example.com",
        "null",
        "",
        "https://" + "a." * 200 + "example.com",
    ],
)
def test_a_subdomain_pattern_rejects_look_alikes(origin):
    assert not policy(origins="https://*.example.com").is_allowed_origin(origin)


@pytest.mark.parametrize(
    "pattern", ["https://*", "https://*.", "*.example.com", "https://a.*.com", "https://*example.com"]
)
def test_malformed_patterns_allow_nothing(pattern):
    cors = policy(origins=pattern)
    assert not cors.is_allowed_origin("https://a.example.com")
    assert not cors.is_allowed_origin("https://example.com")


def test_star_allows_every_origin_and_answers_star():
    cors = policy(origins="*")
    assert cors.is_allowed_origin("https://anything.test")
    assert dict(cors.answer_headers("https://anything.test")) == {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Expose-Headers": EXPOSED_HEADERS,
    }


def test_star_with_credentials_answers_star_without_allowing_credentials_and_warns():
    cors = policy(origins="*", credentials="yes")
    headers = dict(cors.answer_headers("https://anything.test"))
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in headers
    assert cors.warnings() and "credentials" in cors.warnings()[0]


def test_a_listed_origin_with_credentials_is_echoed_with_credentials():
    cors = policy(origins="https://app.example.com", credentials="TRUE")
    headers = dict(cors.answer_headers("https://app.example.com"))
    assert headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert headers["Access-Control-Allow-Credentials"] == "true"
    assert cors.warnings() == []


def test_a_listed_origin_next_to_star_keeps_its_credentials():
    cors = policy(origins="*, https://app.example.com", credentials="on")
    assert dict(cors.answer_headers("https://app.example.com"))["Access-Control-Allow-Credentials"] == "true"
    assert "Access-Control-Allow-Credentials" not in dict(cors.answer_headers("https://other.test"))


@pytest.mark.parametrize("value", ["no", "0", "false", "", "maybe"])
def test_credentials_are_off_unless_the_setting_reads_as_on(value):
    cors = policy(origins="https://app.example.com", credentials=value)
    assert "Access-Control-Allow-Credentials" not in dict(cors.answer_headers("https://app.example.com"))


def test_an_exact_origin_is_echoed_as_the_browser_sent_it():
    cors = policy(origins="https://app.example.com")
    assert (
        dict(cors.answer_headers("https://APP.example.com"))["Access-Control-Allow-Origin"]
        == "https://APP.example.com"
    )


def test_preflight_headers_carry_methods_headers_and_max_age_from_the_settings():
    cors = policy(
        origins="https://app.example.com",
        methods="GET, POST",
        headers="Authorization, X-Custom",
        max_age="600",
    )
    assert dict(cors.preflight_headers("https://app.example.com")) == {
        "Access-Control-Allow-Origin": "https://app.example.com",
        "Access-Control-Allow-Methods": "GET,POST",
        "Access-Control-Allow-Headers": "Authorization,X-Custom",
        "Access-Control-Max-Age": "600",
    }


def test_a_max_age_that_is_not_a_number_falls_back_to_the_default():
    assert policy(origins="*", max_age="soon").max_age == "86400"


def test_the_default_paths_cover_everything_under_api():
    cors = policy(origins="*")
    assert cors.covers_path("/api/pb/v1/objects/articles")
    assert cors.covers_path("/api/other")
    assert not cors.covers_path("/")
    assert not cors.covers_path("/blog/api/x")


def test_paths_are_globs_relative_to_the_site_root():
    cors = policy(origins="*", paths="/api/pb/*, public/*.json")
    assert cors.covers_path("/api/pb/v1/health")
    assert cors.covers_path("/public/feed.json")
    assert not cors.covers_path("/api/other")
    assert not cors.covers_path("/public/feed.xml")


def test_the_administration_area_never_gets_cors_whatever_the_paths_say():
    cors = policy(origins="*", paths="*")
    assert cors.covers_path("/blog")
    assert not cors.covers_path("/mgr")
    assert not cors.covers_path("/mgr/pb/docs")
    assert cors.covers_path("/mgrx")


def test_an_empty_paths_setting_covers_nothing():
    assert not policy(origins="*", paths="").covers_path("/api/pb/v1/health")
