"""The plain token format: `pb_` + 40 random base62 characters + a 6-character CRC32 checksum."""

from __future__ import annotations

import hashlib
import secrets
import string
import zlib

PREFIX = "pb_"
ALPHABET = string.digits + string.ascii_letters
_ALPHABET_SET = frozenset(ALPHABET)
RANDOM_LENGTH = 40
CHECKSUM_LENGTH = 6
TOKEN_LENGTH = len(PREFIX) + RANDOM_LENGTH + CHECKSUM_LENGTH
DISPLAY_PREFIX_LENGTH = 8


def checksum(random_part: str) -> str:
    # The CRC32 in base62, six digits written out (a CRC32 is below 62**6): every request checks one.
    number = zlib.crc32(random_part.encode("ascii"))
    a = ALPHABET
    return (
        a[number // 916_132_832 % 62]
        + a[number // 14_776_336 % 62]
        + a[number // 238_328 % 62]
        + a[number // 3_844 % 62]
        + a[number // 62 % 62]
        + a[number % 62]
    )


def generate() -> str:
    """A new plain token value; it is shown once and never stored."""
    random_part = "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))
    return PREFIX + random_part + checksum(random_part)


def is_well_formed(value: str) -> bool:
    """Whether a value is shaped like a pb_headless token, checksum included (no database needed)."""
    if len(value) != TOKEN_LENGTH or not value.startswith(PREFIX):
        return False
    body = value[len(PREFIX) :]
    random_part, check = body[:RANDOM_LENGTH], body[RANDOM_LENGTH:]
    return _ALPHABET_SET.issuperset(body) and checksum(random_part) == check


def hash_token(value: str) -> str:
    """What is stored and looked up: the sha256 of the whole plain value."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def display_prefix(value: str) -> str:
    return value[:DISPLAY_PREFIX_LENGTH]
