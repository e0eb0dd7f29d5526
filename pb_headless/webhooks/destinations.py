"""Which addresses a delivery may connect to: public ones only, unless the site allows private ones.

The check runs on every address a name resolves to, at connect time, and the connection goes to an
address that passed it, so neither a name pointing at 10.0.0.1 nor a DNS answer that changes between
check and connect reaches an internal service (docs/webhooks.md, "Private addresses").
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

ALLOW_PRIVATE_SETTING = "service_webhooks_allow_private"


class RefusedDestination(Exception):
    """A destination the site's setting does not allow; the message names the address."""


def is_public_address(address: str) -> bool:
    """Globally routable unicast: not private, loopback, link-local, shared, reserved or multicast."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def check_addresses(host: str, addresses: list[str], allow_private: bool) -> None:
    """Refuse the connection when any address of the name is not public (a name that mixes both is
    how rebinding tricks start)."""
    if allow_private:
        return
    for address in addresses:
        if not is_public_address(address):
            raise RefusedDestination(
                f"{host} resolves to {address}, a private, loopback or link-local address "
                f"(allowed only when {ALLOW_PRIVATE_SETTING} is on)"
            )


def private_destination_warning(url: str, allow_private: bool) -> str | None:
    """What to tell the person registering a URL that names a private address outright (a literal
    address or `localhost`) while such deliveries are refused; names are not resolved here."""
    host = (urlsplit(url).hostname or "").lower()
    try:
        private = not is_public_address(host)
    except ValueError:  # a name, not an address
        private = host == "localhost" or host.endswith(".localhost")
    if not private or allow_private:
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
