"""The token checksum's six base62 digits, written out in `tokens/format.py`, against the plain
definition: the CRC32 of the random part in base62, most significant digit first, zero-padded."""

from __future__ import annotations

import random
import zlib

from pb_headless.tokens.format import ALPHABET, CHECKSUM_LENGTH, checksum


def _base62(number: int, width: int) -> str:
    text = ""
    while number:
        number, remainder = divmod(number, 62)
        text = ALPHABET[remainder] + text
    return text.rjust(width, ALPHABET[0])


def test_checksum_is_the_crc32_in_six_base62_digits() -> None:
    chooser = random.Random(7)
    for _ in range(20_000):
        random_part = "".join(chooser.choice(ALPHABET) for _ in range(40))
        expected = _base62(zlib.crc32(random_part.encode("ascii")), CHECKSUM_LENGTH)
        assert checksum(random_part) == expected
