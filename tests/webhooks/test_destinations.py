"""Private destinations: refused by default on the address actually connected, allowed by the setting."""

from __future__ import annotations

import asyncio

import pytest

from pb_headless.webhooks.destinations import is_public_address
from pb_headless.webhooks.sender import Sender
from tests.support.demo import articles
from tests.webhooks.changes import create_row

NEW_ARTICLE = {"id": 8, "title": "Fresh", "category": "news", "published": True}


@pytest.mark.parametrize(
    "address",
    [
        *("127.0.0.1", "10.1.2.3", "169.254.169.254", "192.168.0.10", "172.16.0.1", "100.64.0.1", "0.0.0.0"),
        *("::1", "fe80::1", "fc00::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "224.0.0.1"),
        # IPv6 that carries a private IPv4 address to a translator or tunnel, and site-local.
        *("::10.0.0.1", "::127.0.0.1", "::ffff:0:10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1"),
        *("64:ff9b:1::808:808", "2002:a9fe:a9fe::1", "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2"),
        *("fec0::1", "feff::1"),
    ],
)
def test_private_loopback_link_local_and_other_special_addresses_are_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize(
    "address", ["93.184.215.14", "2606:4700:4700::1111", "8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]
)
def test_globally_routable_addresses_are_public(address):
    assert is_public_address(address)


@pytest.mark.parametrize(
    "url",
    [
        *("http://10.0.0.1:9/hook", "http://169.254.169.254/latest/meta-data", "https://127.0.0.1/"),
        *(
            "http://[::10.0.0.1]:9/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2002:a9fe:a9fe::1]/",
            "http://[fec0::1]/",
        ),
        *("http://127.1:9/", "http://0x7f000001:9/", "http://2130706433:9/", "http://0177.0.0.1:9/"),
        "http://localhost.:9/",
    ],
)
async def test_the_sender_refuses_a_private_address_before_any_connection(url):
    sender = Sender(timeout=5)
    try:
        answer = await sender.post(url, {}, b"{}", allow_private=False)
    finally:
        await sender.aclose()
    assert answer.code is None
    assert answer.error is not None and "service_webhooks_allow_private" in answer.error


async def test_by_default_loopback_and_a_name_resolving_to_it_are_refused_and_nothing_arrives(sqlite_site):
    site = sqlite_site
    await site.host.settings.set("service_webhooks_allow_private", "no")
    port = site.receiver.url.split(":")[2].split("/")[0]
    await site.store.create("by-address", site.receiver.url)
    await site.store.create("by-name", f"http://localhost:{port}/hook")
    await site.store.create("metadata", "http://169.254.169.254/latest/meta-data")
    await site.store.create("internal", "http://10.0.0.1:9/hook")
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.worker.run_once()

    assert site.receiver.received == []
    for name in ("by-address", "by-name", "metadata", "internal"):
        [delivery] = await site.store.deliveries(name)
        assert delivery.status == "pending" and delivery.answer_code is None
        assert "private, loopback or link-local" in (delivery.error or "")


async def test_the_setting_lets_deliveries_reach_a_loopback_receiver(sqlite_site):
    site = sqlite_site
    await site.host.settings.set("service_webhooks_allow_private", "no")
    await site.hook()
    await site.host.settings.set("service_webhooks_allow_private", "yes")
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.deliver()

    assert [post.event["type"] for post in site.receiver.received] == ["articles.create"]


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        ("http://127.0.0.1:9000/hook", True),
        ("http://localhost/hook", True),
        ("http://[::1]:8080/", True),
        ("http://10.0.0.7/", True),
        # Spellings the resolver reads as loopback, and IPv6 forms that reach a private IPv4 address.
        *((url, True) for url in ("http://127.1/", "http://0x7f000001/", "http://2130706433/")),
        *((url, True) for url in ("http://0177.0.0.1/", "http://localhost./", "http://LocalHost:8/")),
        *((url, True) for url in ("http://[::10.0.0.1]/", "http://[::ffff:10.0.0.1]/", "http://[fec0::1]/")),
        *(
            (url, True)
            for url in ("http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::1]/", "http://0/")
        ),
        ("http://[64:ff9b::808:808]/", False),
        ("https://hooks.example.com/pb", False),  # names are not resolved when an endpoint is made
        ("https://93.184.215.14/", False),
    ],
)
def test_registering_a_private_address_warns_while_such_deliveries_are_refused(url, warned):
    from pb_headless.webhooks.destinations import private_destination_warning

    assert (private_destination_warning(url, allow_private=False) is not None) is warned
    assert private_destination_warning(url, allow_private=True) is None


@pytest.mark.parametrize(
    "url",
    [
        *("http://127.1:9/", "http://0x7f000001:9/", "http://2130706433:9/", "http://0177.0.0.1:9/"),
        *("http://localhost.:9/", "http://[::ffff:10.0.0.1]/", "http://[::10.0.0.1]/", "http://[fec0::1]/"),
        *("http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::1]/", "http://169.254.169.254/"),
        *("https://hooks.example.com/pb", "https://93.184.215.14/", "http://[2606:4700:4700::1111]/"),
    ],
)
async def test_registration_warns_about_exactly_the_hosts_a_delivery_refuses(url):
    from pb_headless.webhooks.destinations import private_destination_warning

    sender = Sender(timeout=0.5)
    try:
        answer = await sender.post(url, {}, b"{}", allow_private=False)
    finally:
        await sender.aclose()
    refused = "service_webhooks_allow_private" in (answer.error or "")
    assert (private_destination_warning(url, allow_private=False) is not None) is refused


async def test_the_host_header_of_an_ipv6_destination_keeps_its_brackets():
    seen: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "::1", 0)
    port = server.sockets[0].getsockname()[1]
    sender = Sender(timeout=5)
    try:
        answered = await sender.post(f"http://[::1]:{port}/hook", {}, b"{}", allow_private=True)
    finally:
        await sender.aclose()
        server.close()
    assert answered.code == 204
    head = seen[0].decode("latin-1").lower()
    assert f"\r\nhost: [::1]:{port}\r\n" in head
