"""Which addresses a delivery may connect to: public ones only, unless the site allows private ones.

The check runs on every address a name resolves to, at connect time, and the connection goes to an
address that passed it, so neither a name pointing at 10.0.0.1 nor a DNS answer that changes between
check and connect reaches an internal service (docs/webhooks.md, "Private addresses"). Registration
asks the same question of the URL's host (`private_destination_warning`), reading it the way the
resolver will: `127.1`, `0x7f000001` and `2130706433` are all 127.0.0.1.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

ALLOW_PRIVATE_SETTING = "service_webhooks_allow_private"

_IPv6 = ipaddress.IPv6Address
_IPv6Net = ipaddress.IPv6Network
# IPv6 ranges that carry an IPv4 address in their last 32 bits and reach it through a translator or
# tunnel: the IPv4 address is where the packet ends up, so it is the one vetted.
_LOW_32_EMBEDDING = (
    _IPv6Net("::/96"),  # IPv4-compatible (deprecated), e.g. ::10.0.0.1
    _IPv6Net("::ffff:0:0/96"),  # IPv4-mapped
    _IPv6Net("::ffff:0:0:0/96"),  # IPv4-translated (RFC 2765)
    _IPv6Net("64:ff9b::/96"),  # NAT64, well-known prefix (RFC 6052)
)
# Ranges that are never a public destination, though Python before 3.12 calls them global.
_NEVER_PUBLIC = (
    _IPv6Net("fec0::/10"),  # site-local (deprecated, still routed inside some networks)
    _IPv6Net("64:ff9b:1::/48"),  # NAT64 for local use (RFC 8215)
    _IPv6Net("2001::/32"),  # Teredo: the client's address is obfuscated in the last 32 bits
)


class RefusedDestination(Exception):
    """A destination the site's setting does not allow; the message names the address."""


def is_public_address(address: str) -> bool:
    """Globally routable unicast: not private, loopback, link-local, shared, reserved or multicast,
    and, for IPv6 that embeds an IPv4 address (mapped, compatible, NAT64, 6to4), neither is that."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, _IPv6):
        if ip in (_IPv6("::"), _IPv6("::1")) or any(ip in net for net in _NEVER_PUBLIC):
            return False
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return _is_public(embedded)
    return _is_public(ip)


def _is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.sixtofour is not None:  # 2002:a.b.c.d::/48
        return ip.sixtofour
    if any(ip in net for net in _LOW_32_EMBEDDING):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(host: str, addresses: list[str], allow_private: bool) -> str | None:
    """Why a connection to `host` at these addresses is refused, or None: the one rule deliveries
    and registration share. Any address not public refuses the host (a name that mixes both is how
    rebinding tricks start)."""
    if allow_private:
        return None
    for address in addresses:
        if not is_public_address(address):
            return (
                f"{host} resolves to {address}, a private, loopback or link-local address "
                f"(allowed only when {ALLOW_PRIVATE_SETTING} is on)"
            )
    return None


def check_addresses(host: str, addresses: list[str], allow_private: bool) -> None:
    """Refuse the connection when `address_problem` names one."""
    problem = address_problem(host, addresses, allow_private)
    if problem is not None:
        raise RefusedDestination(problem)


def literal_addresses(host: str) -> list[str] | None:
    """The addresses a host that is an address in any spelling the resolver accepts (`127.1`,
    `0x7f000001`, `0177.0.0.1`, `::ffff:10.0.0.1`) stands for, read without a DNS query; the
    loopback for `localhost` names (with or without the final dot); None for any other name."""
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError):
        name = host.lower().rstrip(".")
        return ["127.0.0.1"] if name == "localhost" or name.endswith(".localhost") else None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def private_destination_warning(url: str, allow_private: bool) -> str | None:
    """What to tell the person registering a URL whose host a delivery would refuse as it stands:
    an address in any spelling, or a `localhost` name. Other names are not resolved here; a
    delivery vets what they resolve to when it connects."""
    host = urlsplit(url).hostname or ""
    addresses = literal_addresses(host)
    if addresses is None or address_problem(host, addresses, allow_private) is None:
        return None
    return (
        f"the destination {host} is a private, loopback or link-local address: deliveries to it are refused "
        f"until the setting {ALLOW_PRIVATE_SETTING} is on (docs/webhooks.md)"
    )


def checked_url(url: str) -> str:
    """An endpoint URL as stored: http or https, with a host, without user:password."""
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"'{url}' is not an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError("a webhook URL carries no user name or password")
    if len(url) > 2000:
        raise ValueError("a webhook URL is at most 2000 characters")
    try:
        parts.port  # noqa: B018 — reading it checks it
    except ValueError:
        raise ValueError(f"'{url}' has an invalid port") from None
    return url
