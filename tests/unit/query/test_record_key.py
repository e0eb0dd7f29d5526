"""A record's id as written in a path: its key, kept per spec within a bound (api/records.py)."""

from __future__ import annotations

from pb_headless.api import records
from pb_headless.api.records import KEPT_KEYS, record_key
from pb_headless.registry.spec import ObjectSpec


def test_a_kept_key_answers_as_the_first_look_did(article_spec: ObjectSpec) -> None:
    assert record_key(article_spec, "12345") == 12345
    assert record_key(article_spec, "12345") == 12345  # the kept one
    for written in ("01", "+1", " 1", "1 ", "1.0", "0x1", "", "x"):
        assert record_key(article_spec, written) is None
        assert record_key(article_spec, written) is None  # a refused id is never kept
    assert "01" not in article_spec.derived["records.keys"]


def test_the_kept_keys_are_bounded_oldest_out_first(article_spec: ObjectSpec) -> None:
    for key in range(1, KEPT_KEYS + 11):
        assert record_key(article_spec, str(key)) == key
    kept = article_spec.derived["records.keys"]
    assert len(kept) == KEPT_KEYS
    assert "1" not in kept and str(KEPT_KEYS + 10) in kept
    assert record_key(article_spec, "1") == 1  # found again from the text


def test_a_long_id_is_not_kept(article_spec: ObjectSpec) -> None:
    written = "9" * (records.KEPT_KEY_TEXT + 1)
    record_key(article_spec, written)
    assert written not in article_spec.derived.get("records.keys", {})
