"""Who the client is: the socket peer, unless that peer is a trusted proxy (docs/cors-and-rate-limits.md)."""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN_CLIENT = "unknown"

# X-Forwarded-Proto and -Host end up in absolute links, so only plausible values are believed.
_SCHEMES = frozenset({"http", "https"})
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{{1,5}})?")
MAX_HOST = 255
_BRACKETED = re.compile(r"\[([0-9A-Fa-f:.]+)\](?::\d+)?")
_IPV4_WITH_PORT = re.compile(r"(\d{1,3}(?:\.\d{1,3}){3}):\d+")


class TrustedProxies:
    """An explicit list of proxy addresses/CIDRs; empty by default, so nothing forwarded is believed.

    Accepts an iterable of entries or one string separated by commas or spaces (the form of the
    `PB_TRUSTED_PROXIES` variable). A malformed entry fails at once, naming it.
    """

    def __init__(self, entries: Iterable[str] | str = ()) -> None:
        if isinstance(entries, str):
            entries = entries.replace(",", " ").split()
        networks: list[IPNetwork] = []
        for entry in (e.strip() for e in entries):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                message = f"trusted proxies: {entry!r} is not an IP address or network (CIDR)"
                raise ValueError(message) from None
        self.networks: tuple[IPNetwork, ...] = tuple(networks)

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __repr__(self) -> str:
        return f"TrustedProxies({[str(network) for network in self.networks]!r})"

    def is_trusted(self, address: str) -> bool:
        parsed = parse_address(address)
        return parsed is not None and any(parsed in network for network in self.networks)

    def peer(self, scope: Mapping[str, Any]) -> str:
        client = scope.get("client")
        return str(client[0]) if client and client[0] else UNKNOWN_CLIENT

    def client_ip(self, scope: Mapping[str, Any]) -> str:
        """The socket peer or, behind trusted proxies, the first untrusted X-Forwarded-For address
        walking right to left: each trusted proxy appends the address it saw, so everything left of
        the last untrusted hop is the client's to forge."""
        peer = self.peer(scope)
        if not self.networks or not self.is_trusted(peer):
            return peer
        hops = [hop.strip() for hop in (_header(scope, b"x-forwarded-for") or "").split(",") if hop.strip()]
        client = peer
        for hop in reversed(hops):
            address = parse_address(hop)
            if address is None:
                break  # a garbled hop is not evidence of anything: stay with the last address we believe
            client = str(address)
            if not self.is_trusted(client):
                break
        return client

    def forwarded(self, scope: Mapping[str, Any], header: bytes) -> str | None:
        """An X-Forwarded-Proto/-Host value, only when the peer is a trusted proxy and the value is sound.

        The rightmost value is taken: it is the one the proxy talking to us wrote, while an appending
        proxy would leave anything the client sent to its left.
        """
        if not self.networks or not self.is_trusted(self.peer(scope)):
            return None
        values = [value.strip() for value in (_header(scope, header) or "").split(",") if value.strip()]
        if not values:
            return None
        value = values[-1]
        if header == b"x-forwarded-proto":
            return value.lower() if value.lower() in _SCHEMES else None
        if header == b"x-forwarded-host":
            return value if len(value) <= MAX_HOST and _HOST.fullmatch(value) else None
        return value

    def origin(self, scope: Mapping[str, Any]) -> str:
        """`scheme://host` the client addressed: links, `servers` and the docs page are built from it.
        Forwarded values count only from a trusted proxy; a Host header that is not a host is ignored."""
        scheme = self.forwarded(scope, b"x-forwarded-proto") or scope.get("scheme", "http")
        host = self.forwarded(scope, b"x-forwarded-host") or _header(scope, b"host") or ""
        if not (len(host) <= MAX_HOST and _HOST.fullmatch(host)):
            server = scope.get("server")
            host = f"{server[0]}:{server[1]}" if server else "localhost"
        return f"{scheme}://{host}"


@functools.lru_cache(maxsize=256)  # a pure function of the address, asked on every request
def rate_key(address: str) -> str:
    """The rate-limit bucket of an address: itself for IPv4, its /64 for IPv6 (one subscriber's
    allocation, so rotating through a prefix does not buy more requests)."""
    parsed = parse_address(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed) if parsed is not None else address


def parse_address(text: str) -> IPAddress | None:
    """An IP address as proxies and servers write it: with an IPv6 zone, in brackets, with a port;
    an IPv4-mapped IPv6 address is its IPv4 address. Anything else → None."""
    text = text.strip()
    bracketed = _BRACKETED.fullmatch(text)
    if bracketed:
        text = bracketed.group(1)
    else:
        with_port = _IPV4_WITH_PORT.fullmatch(text)
        if with_port:
            text = with_port.group(1)
    try:
        address = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _header(scope: Mapping[str, Any], name: bytes) -> str | None:
    """A request header; repeated headers join with commas, as HTTP says they may."""
    values = [value.decode("latin-1") for key, value in scope.get("headers", ()) if key == name]
    return ",".join(values) if values else None
