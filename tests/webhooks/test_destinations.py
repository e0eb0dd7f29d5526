"""Private destinations: refused by default on the address actually connected, allowed by the setting."""

from __future__ import annotations

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
    ],
)
def test_private_loopback_link_local_and_other_special_addresses_are_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:4700:4700::1111", "8.8.8.8"])
def test_globally_routable_addresses_are_public(address):
    assert is_public_address(address)


@pytest.mark.parametrize(
    "url", ["http://10.0.0.1:9/hook", "http://169.254.169.254/latest/meta-data", "https://127.0.0.1/"]
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
        ("https://hooks.example.com/pb", False),  # names are not resolved when an endpoint is made
        ("https://93.184.215.14/", False),
    ],
)
def test_registering_a_private_address_warns_while_such_deliveries_are_refused(url, warned):
    from pb_headless.webhooks.destinations import private_destination_warning

    assert (private_destination_warning(url, allow_private=False) is not None) is warned
    assert private_destination_warning(url, allow_private=True) is None
