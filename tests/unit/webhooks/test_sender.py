"""The sender's failures are answers, never exceptions: a missing extra, a receiver that is too slow."""

from __future__ import annotations

import sys

from pb_headless.webhooks.sender import MISSING, Sender
from tests.webhooks.receiver import running_receiver


async def test_without_httpcore_a_try_fails_with_the_command_that_installs_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "httpcore", None)  # as if the extra were not installed
    answer = await Sender().post("https://hooks.example.com/", {}, b"{}", allow_private=False)
    assert (answer.code, answer.error) == (None, MISSING)
    assert "pip install 'pb_headless[webhooks]'" in MISSING


async def test_a_receiver_slower_than_the_time_limit_is_a_failed_try():
    sender = Sender(timeout=0.3)
    async with running_receiver() as receiver:
        receiver.delay = 2
        answer = await sender.post(receiver.url, {}, b"{}", allow_private=True)
        await sender.aclose()
    assert (answer.code, answer.error, answer.succeeded) == (None, "no answer within 0.3 s", False)


async def test_a_2xx_answer_is_success_and_its_time_is_measured():
    sender = Sender()
    async with running_receiver() as receiver:
        receiver.status = 204
        answer = await sender.post(receiver.url, {}, b"{}", allow_private=True)
        await sender.aclose()
    assert (answer.code, answer.error, answer.succeeded) == (204, None, True)
    assert answer.duration_ms >= 0
