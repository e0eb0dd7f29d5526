"""Password hashing for the administration users: stdlib scrypt with a random salt, never the plain value."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

ALGORITHM = "scrypt"
N, R, P = 2**14, 8, 1  # about 16 MiB and a few tens of milliseconds per check
SALT_BYTES = 16
KEY_BYTES = 32
MIN_LENGTH = 8


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _derive(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=KEY_BYTES, maxmem=256 * 1024 * 1024
    )


def hash_password(password: str) -> str:
    """`scrypt$n$r$p$salt$key`, so the cost can be raised later without breaking stored hashes."""
    salt = secrets.token_bytes(SALT_BYTES)
    return "$".join([ALGORITHM, str(N), str(R), str(P), _b64(salt), _b64(_derive(password, salt, N, R, P))])


def verify_password(password: str, stored: str) -> bool:
    try:
        algorithm, n, r, p, salt, key = stored.split("$")
        if algorithm != ALGORITHM:
            return False
        derived = _derive(password, base64.b64decode(salt), int(n), int(r), int(p))
        return hmac.compare_digest(derived, base64.b64decode(key))
    except (ValueError, TypeError):
        return False


def random_password() -> str:
    return secrets.token_urlsafe(12)
