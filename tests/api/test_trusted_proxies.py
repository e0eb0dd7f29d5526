"""docs/cors-and-rate-limits.md: X-Forwarded-* is believed only from configured trusted proxies.

The test client connects from 203.0.113.7; configuring that address as a trusted proxy makes it the
proxy, and the X-Forwarded-For it sends the address its client connected from.
"""

import pytest

from pb_headless import HeadlessAPI
from tests.support.demo import create_demo, demo_registry

PEER = "203.0.113.7"


async def statuses(host, *forwarded_for: str) -> list[int]:
    return [
        (await host.client.get("/api/pb/v1/health", headers={"X-Forwarded-For": value})).status_code
        for value in forwarded_for
    ]


async def test_without_trusted_proxies_a_spoofed_forwarded_for_does_not_escape_the_limit(
    sqlite_database, host_factory
):
    host = await host_factory(sqlite_database, rate_limit=2)
    spoofed = ["198.51.100.1", "198.51.100.2", "198.51.100.3", "2001:db8::1"]
    assert await statuses(host, *spoofed) == [200, 200, 429, 429]


async def test_a_forwarded_for_from_a_peer_outside_the_trusted_list_is_ignored(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=2, trusted_proxies=["10.0.0.0/8"])
    assert await statuses(host, "198.51.100.1", "198.51.100.2", "198.51.100.3") == [200, 200, 429]


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=1, trusted_proxies=[PEER])
    clients = ["198.51.100.1", "198.51.100.1", "198.51.100.2", "198.51.100.2"]
    assert await statuses(host, *clients) == [200, 429, 200, 429]


async def test_behind_a_trusted_proxy_a_spoofed_left_part_does_not_escape_the_limit(
    sqlite_database, host_factory
):
    host = await host_factory(sqlite_database, rate_limit=2, trusted_proxies=f"{PEER}/32")
    # The client forges the header; the proxy appends the address it really saw.
    forged = ["6.6.6.6, 198.51.100.1", "7.7.7.7, 198.51.100.1", "1.1.1.1, 8.8.8.8, 198.51.100.1"]
    assert await statuses(host, *forged) == [200, 200, 429]


async def test_a_chain_of_trusted_proxies_is_walked_right_to_left(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=1, trusted_proxies=[PEER, "10.0.0.0/8"])
    chains = ["6.6.6.6, 198.51.100.1, 10.1.1.1", "7.7.7.7, 198.51.100.1, 10.2.2.2"]
    assert await statuses(host, *chains) == [200, 429]


async def test_behind_a_trusted_proxy_ipv6_clients_count_per_64(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=1, trusted_proxies=[PEER])
    assert await statuses(host, "2001:db8:1:2::1", "2001:db8:1:2::ffff", "2001:db8:1:3::1") == [200, 429, 200]


async def test_a_trusted_proxy_that_forwards_nothing_is_counted_itself(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=1, trusted_proxies=[PEER])
    assert (await host.client.get("/api/pb/v1/health")).status_code == 200
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429


async def links_of(host, token: str, **headers: str) -> str:
    response = await host.client.get("/api/pb/v1/objects", headers={**host.auth(token), **headers})
    return next(item["links"]["self"] for item in response.json()["data"] if item["name"] == "articles")


FORWARDED = {"X-Forwarded-Host": "api.example.com", "X-Forwarded-Proto": "https"}


async def test_links_come_from_host_and_ignore_forwarded_headers_from_an_untrusted_peer(
    sqlite_database, host_factory
):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    token = await host.token("*")
    assert await links_of(host, token) == "http://testserver/api/pb/v1/objects/articles"
    assert await links_of(host, token, **FORWARDED) == "http://testserver/api/pb/v1/objects/articles"
    assert (
        await links_of(host, token, Host="site.test:8080")
        == "http://site.test:8080/api/pb/v1/objects/articles"
    )


async def test_links_follow_forwarded_host_and_proto_from_a_trusted_proxy(sqlite_database, host_factory):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry(), trusted_proxies=[PEER])
    token = await host.token("*")
    assert await links_of(host, token, **FORWARDED) == "https://api.example.com/api/pb/v1/objects/articles"
    assert (
        await links_of(host, token, **{"X-Forwarded-Host": "evil.example/phish"})
        == "http://testserver/api/pb/v1/objects/articles"
    )


def test_a_malformed_trusted_proxy_stops_the_start(sqlite_database):
    with pytest.raises(ValueError, match="not an IP address"):
        HeadlessAPI(sqlite_database, demo_registry(), trusted_proxies="10.0.0.1, proxy.internal")
