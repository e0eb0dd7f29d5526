"""Who the client is: the socket peer, unless that peer is a trusted proxy (CONTRACT §6, §9)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN_CLIENT = "unknown"


class TrustedProxies:
    """An explicit list of proxy addresses/CIDRs; empty by default, so nothing forwarded is believed."""

    def __init__(self, entries: Iterable[str] | str = ()) -> None:
        if isinstance(entries, str):
            entries = entries.replace(",", " ").split()
        self.networks: tuple[IPNetwork, ...] = tuple(
            ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())

    def __bool__(self) -> bool:
        return bool(self.networks)

    def is_trusted(self, address: str) -> bool:
        parsed = _parse(address)
        return parsed is not None and any(parsed in network for network in self.networks)

    def peer(self, scope: Mapping[str, Any]) -> str:
        client = scope.get("client")
        return client[0] if client else UNKNOWN_CLIENT

    def client_ip(self, scope: Mapping[str, Any]) -> str:
        """The socket peer, or, behind trusted proxies, the first untrusted X-Forwarded-For address
        walking right to left (the left part of the header is the client's to forge)."""
        peer = self.peer(scope)
        if not self.networks or not self.is_trusted(peer):
            return peer
        forwarded = _header(scope, b"x-forwarded-for")
        if not forwarded:
            return peer
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        for hop in reversed(hops):
            if _parse(hop) is None:
                return peer  # a garbled header is not evidence of anything
            if not self.is_trusted(hop):
                return hop
        return hops[0] if hops else peer

    def forwarded(self, scope: Mapping[str, Any], header: bytes) -> str | None:
        """An X-Forwarded-* value, only when the peer is a trusted proxy."""
        if not self.networks or not self.is_trusted(self.peer(scope)):
            return None
        value = _header(scope, header)
        return value.split(",")[0].strip() if value else None


def rate_key(address: str) -> str:
    """The rate-limit bucket of an address: itself for IPv4, its /64 for IPv6."""
    parsed = _parse(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed) if parsed is not None else address


def _parse(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return None


def _header(scope: Mapping[str, Any], name: bytes) -> str | None:
    values = [value.decode("latin-1") for key, value in scope.get("headers", ()) if key == name]
    return ",".join(values) if values else None
