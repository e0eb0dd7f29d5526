"""The bound of a kept cache (pb_headless/database/caches.py): entries, and bytes where entries vary."""

from __future__ import annotations

from dataclasses import dataclass

from pb_headless.database.caches import Bounded


@dataclass
class Sized:
    weight: int


def test_the_least_recently_used_entry_goes_first_past_the_entry_bound():
    kept: Bounded[str, int] = Bounded(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now "b" is the least recently used
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3)


def test_entries_go_until_their_bytes_fit_the_byte_bound():
    kept: Bounded[str, Sized] = Bounded(100, max_bytes=1000)
    for name in "abcd":
        kept.put(name, Sized(300))
    assert len(kept) == 3 and kept.bytes == 900 and kept.get("a") is None
    kept.put("big", Sized(800))
    assert len(kept) == 1 and kept.bytes == 800


def test_replacing_an_entry_counts_its_bytes_once():
    kept: Bounded[str, Sized] = Bounded(10, max_bytes=1000)
    kept.put("a", Sized(400))
    kept.put("a", Sized(500))
    assert len(kept) == 1 and kept.bytes == 500
