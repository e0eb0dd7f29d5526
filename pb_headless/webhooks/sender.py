"""The HTTP side of a delivery: one POST, on a connection to a vetted address, within the time limit.

It speaks through httpcore (the transport layer of httpx, installed with `pb_headless[webhooks]`), whose
network backend is the one place a TCP connection is opened: `VettingBackend.connect_tcp` resolves the
name, vets every address and connects to a vetted one; TLS still checks the certificate against the
name in the URL. httpcore never follows redirects, so a 3xx is just a failed try.
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pb_headless.webhooks.destinations import RefusedDestination, check_addresses, literal_addresses

TRY_TIMEOUT = 10.0  # a try that has no answer within this is a failure (docs/webhooks.md)
MAX_ANSWER_BYTES = 64 * 1024  # the receiver's body is read only to keep the connection reusable
MISSING = "webhook deliveries need httpcore, which is not installed: pip install 'pb_headless[webhooks]'"


@dataclass(frozen=True, slots=True)
class Answer:
    """What one try got: the status code (None when there was none), the time taken, why it failed."""

    code: int | None
    duration_ms: int
    error: str | None

    @property
    def succeeded(self) -> bool:
        return self.code is not None and 200 <= self.code < 300


def _httpcore() -> Any:
    try:
        import httpcore
    except ImportError:  # the extra is not installed
        raise RuntimeError(MISSING) from None
    return httpcore


def missing_sender() -> str | None:
    """Why no delivery could be sent from this install (the extra is missing), or None when they can."""
    try:
        _httpcore()
    except RuntimeError as missing:
        return str(missing)
    return None


def _vetting_backend(allow_private: bool) -> Any:
    httpcore = _httpcore()

    class VettingBackend(httpcore.AsyncNetworkBackend):  # type: ignore[name-defined]
        def __init__(self) -> None:
            self._inner = httpcore.AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> Any:
            addresses = await _resolve(host, port)
            check_addresses(host, addresses, allow_private)
            failure: Exception | None = None
            for address in addresses:
                try:
                    return await self._inner.connect_tcp(
                        address, port, timeout, local_address=local_address, socket_options=socket_options
                    )
                except httpcore.ConnectError as error:
                    failure = error
            raise failure or httpcore.ConnectError(f"no address for {host}")

        async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
            raise RefusedDestination("webhooks are delivered over TCP only")

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    return VettingBackend()


async def _resolve(host: str, port: int) -> list[str]:
    # An address in any spelling, and `localhost` names, are read the way registration reads them;
    # only other names go to the resolver.
    literal = literal_addresses(host)
    if literal is not None:
        return literal
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class Sender:
    """Keeps one connection pool per value of the private-address setting (a change of the setting
    never reuses a connection the other value opened)."""

    def __init__(self, timeout: float = TRY_TIMEOUT, connections: int = 20) -> None:
        self.timeout = timeout
        self.connections = connections  # as many as tries may run at once: no try waits for another
        self._pools: dict[bool, Any] = {}

    async def post(self, url: str, headers: dict[str, str], body: bytes, *, allow_private: bool) -> Answer:
        started = time.monotonic()
        try:
            code = await asyncio.wait_for(self._post(url, headers, body, allow_private), self.timeout)
        except TimeoutError:
            return Answer(None, _since(started), f"no answer within {self.timeout:g} s")
        except RefusedDestination as refused:
            return Answer(None, _since(started), str(refused))
        except RuntimeError as missing:
            return Answer(None, _since(started), str(missing))
        except Exception as error:  # connection refused, reset, TLS, a name that does not resolve
            return Answer(None, _since(started), f"{type(error).__name__}: {error}"[:255])
        return Answer(code, _since(started), None if 200 <= code < 300 else f"answer {code}")

    async def _post(self, url: str, headers: dict[str, str], body: bytes, allow_private: bool) -> int:
        pool = self._client_pool(allow_private)
        timeouts = dict.fromkeys(("connect", "read", "write", "pool"), self.timeout)
        headers = {"Host": host_header(url), **headers}
        async with pool.stream(
            "POST", url, headers=headers, content=body, extensions={"timeout": timeouts}
        ) as response:
            read = 0
            async for chunk in response.aiter_stream():
                read += len(chunk)
                if read > MAX_ANSWER_BYTES:
                    break
            return int(response.status)

    def _client_pool(self, allow_private: bool) -> Any:
        pool = self._pools.get(allow_private)
        if pool is None:
            httpcore = _httpcore()
            pool = httpcore.AsyncConnectionPool(
                network_backend=_vetting_backend(allow_private),
                max_connections=self.connections,
                keepalive_expiry=30,
            )
            self._pools[allow_private] = pool
        return pool

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()


def host_header(url: str) -> str:
    """The `Host` a receiver expects: the URL's host and port as written, an IPv6 address in its
    brackets (httpcore writes `::1` bare, which no server parses as a host)."""
    return urlsplit(url).netloc.rpartition("@")[2]


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
