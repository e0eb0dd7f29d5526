"""Password hashing for the administration users: stdlib scrypt with a random salt, never the plain value."""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import secrets
import weakref

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


# scrypt takes ~16 MiB per check: a burst of sign-ins waits here rather than filling the memory.
_CHECKS_AT_ONCE = 4
_checking: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


async def check_password(password: str, stored: str) -> bool:
    """`verify_password` in a worker thread (scrypt releases the GIL), a few at a time per process."""
    loop = asyncio.get_running_loop()
    semaphore = _checking.setdefault(loop, asyncio.Semaphore(_CHECKS_AT_ONCE))
    async with semaphore:
        return await asyncio.to_thread(verify_password, password, stored)


@functools.cache
def stand_in_hash() -> str:
    """A hash no password matches, checked for an unknown user so that it costs one check too."""
    return hash_password(secrets.token_urlsafe(16))


def random_password() -> str:
    return secrets.token_urlsafe(12)
