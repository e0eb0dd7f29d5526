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


def _base62(number: int, width: int) -> str:
    text = ""
    while number:
        number, remainder = divmod(number, 62)
        text = ALPHABET[remainder] + text
    return text.rjust(width, ALPHABET[0])


def checksum(random_part: str) -> str:
    return _base62(zlib.crc32(random_part.encode("ascii")), CHECKSUM_LENGTH)


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
