"""pb_headless/proxies.py: who the client is, and what forwarded headers are believed
(docs/cors-and-rate-limits.md)."""

import pytest

from pb_headless.proxies import TrustedProxies, parse_address, rate_key


def scope(peer: str | None, **headers: str) -> dict:
    return {
        "client": (peer, 5000) if peer else None,
        "headers": [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()],
    }


def test_without_trusted_proxies_the_client_is_the_socket_peer_whatever_it_forwards():
    proxies = TrustedProxies()
    assert proxies.client_ip(scope("198.51.100.1", x_forwarded_for="1.2.3.4")) == "198.51.100.1"


def test_a_forwarded_header_from_an_untrusted_peer_is_ignored():
    proxies = TrustedProxies(["10.0.0.0/8"])
    assert proxies.client_ip(scope("198.51.100.1", x_forwarded_for="10.0.0.1, 1.2.3.4")) == "198.51.100.1"


def test_behind_a_trusted_proxy_the_client_is_the_address_the_proxy_appended():
    proxies = TrustedProxies("10.0.0.1")
    assert proxies.client_ip(scope("10.0.0.1", x_forwarded_for="1.2.3.4")) == "1.2.3.4"


def test_a_spoofed_left_part_is_passed_over_walking_right_to_left():
    proxies = TrustedProxies("10.0.0.1")
    spoofed = scope("10.0.0.1", x_forwarded_for="6.6.6.6, 7.7.7.7, 1.2.3.4")
    assert proxies.client_ip(spoofed) == "1.2.3.4"


def test_a_chain_of_trusted_proxies_is_walked_past():
    proxies = TrustedProxies("10.0.0.0/8, 192.168.1.1")
    chain = scope("10.0.0.1", x_forwarded_for="6.6.6.6, 1.2.3.4, 192.168.1.1, 10.0.0.7")
    assert proxies.client_ip(chain) == "1.2.3.4"


def test_when_every_hop_is_trusted_the_leftmost_is_the_client():
    proxies = TrustedProxies("10.0.0.0/8")
    assert proxies.client_ip(scope("10.0.0.1", x_forwarded_for="10.1.1.1, 10.2.2.2")) == "10.1.1.1"


def test_a_garbled_hop_stops_the_walk_at_the_last_believed_address():
    proxies = TrustedProxies("10.0.0.0/8")
    assert proxies.client_ip(scope("10.0.0.1", x_forwarded_for="1.2.3.4, garbage")) == "10.0.0.1"
    assert proxies.client_ip(scope("10.0.0.1", x_forwarded_for="garbage, 10.0.0.5")) == "10.0.0.5"


def test_a_trusted_proxy_without_forwarded_header_is_itself_the_client():
    assert TrustedProxies("10.0.0.1").client_ip(scope("10.0.0.1")) == "10.0.0.1"


def test_repeated_forwarded_headers_read_as_one_list():
    proxies = TrustedProxies("10.0.0.1")
    request = {
        "client": ("10.0.0.1", 1),
        "headers": [(b"x-forwarded-for", b"6.6.6.6"), (b"x-forwarded-for", b"1.2.3.4")],
    }
    assert proxies.client_ip(request) == "1.2.3.4"


def test_hops_written_with_ports_brackets_or_zones_are_understood():
    proxies = TrustedProxies("10.0.0.1")
    assert proxies.client_ip(scope("10.0.0.1", x_forwarded_for="1.2.3.4:5678")) == "1.2.3.4"
    assert proxies.client_ip(scope("10.0.0.1", x_forwarded_for="[2001:db8::1]:443")) == "2001:db8::1"
    assert parse_address("fe80::1%eth0") == parse_address("fe80::1")


def test_an_ipv4_mapped_peer_is_matched_against_ipv4_networks():
    proxies = TrustedProxies("10.0.0.0/8")
    assert proxies.is_trusted("::ffff:10.0.0.1")
    assert proxies.client_ip(scope("::ffff:10.0.0.1", x_forwarded_for="1.2.3.4")) == "1.2.3.4"


def test_ipv6_proxies_and_clients_are_supported():
    proxies = TrustedProxies(["2001:db8:ffff::/48"])
    assert proxies.client_ip(scope("2001:db8:ffff::1", x_forwarded_for="2001:db8:1::9")) == "2001:db8:1::9"


def test_a_missing_peer_is_one_unknown_client():
    assert TrustedProxies().client_ip({"headers": []}) == "unknown"


def test_a_malformed_entry_fails_at_once_naming_it():
    with pytest.raises(ValueError, match=r"'proxy\.local' is not an IP address"):
        TrustedProxies("10.0.0.1, proxy.local")


def test_entries_may_be_separated_by_commas_or_spaces():
    assert len(TrustedProxies("10.0.0.1, 10.0.0.2 192.168.0.0/16").networks) == 3
    assert not TrustedProxies("")


def test_ipv4_clients_count_each_address():
    assert rate_key("203.0.113.7") == "203.0.113.7"
    assert rate_key("::ffff:203.0.113.7") == "203.0.113.7"


def test_ipv6_clients_count_per_64():
    assert rate_key("2001:db8:1:2:aaaa::1") == rate_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert rate_key("2001:db8:1:3::1") != rate_key("2001:db8:1:2::1")


def test_a_peer_that_is_no_address_is_its_own_bucket():
    assert rate_key("unknown") == "unknown"


def test_forwarded_proto_and_host_are_believed_only_from_a_trusted_peer():
    headers = {"x_forwarded_proto": "https", "x_forwarded_host": "api.example.com"}
    assert TrustedProxies().forwarded(scope("10.0.0.1", **headers), b"x-forwarded-proto") is None
    trusted = TrustedProxies("10.0.0.1")
    assert trusted.forwarded(scope("10.0.0.1", **headers), b"x-forwarded-proto") == "https"
    assert trusted.forwarded(scope("10.0.0.1", **headers), b"x-forwarded-host") == "api.example.com"
    assert trusted.forwarded(scope("10.0.0.2", **headers), b"x-forwarded-host") is None


def test_the_rightmost_forwarded_value_is_the_one_the_trusted_proxy_wrote():
    request = scope(
        "10.0.0.1", x_forwarded_host="evil.example, site.example:8443", x_forwarded_proto="http, https"
    )
    assert TrustedProxies("10.0.0.1").forwarded(request, b"x-forwarded-host") == "site.example:8443"
    assert TrustedProxies("10.0.0.1").forwarded(request, b"x-forwarded-proto") == "https"


@pytest.mark.parametrize(
    "header, value",
    [
        ("x_forwarded_proto", "javascript"),
        ("x_forwarded_host", "evil.example/path"),
        ("x_forwarded_host", "a b"),
        ("x_forwarded_host", "a" * 300),
        ("x_forwarded_host", "x@evil.example"),
    ],
)
def test_implausible_forwarded_values_are_not_believed(header, value):
    request = scope("10.0.0.1", **{header: value})
    name = header.replace("_", "-").encode()
    assert TrustedProxies("10.0.0.1").forwarded(request, name) is None
