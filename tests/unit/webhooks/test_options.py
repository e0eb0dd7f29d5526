"""The retry schedule: the documented one by default, injectable, and checked."""

import pytest

from pb_headless import WebhookOptions


def test_the_default_schedule_is_the_documented_one_eight_tries_over_about_a_day():
    options = WebhookOptions()
    delays = [options.next_delay(tries) for tries in range(1, 9)]
    assert delays == [10, 60, 300, 1800, 7200, 21600, 43200, None]
    assert 20 * 3600 < sum(delays[:-1]) < 24 * 3600
    assert options.try_timeout == 10


def test_an_injected_schedule_decides_how_many_tries_there_are():
    options = WebhookOptions(retry_delays=(0, 0))
    assert [options.next_delay(tries) for tries in (1, 2, 3)] == [0, 0, None]


@pytest.mark.parametrize(
    "values",
    [{"lease": 5, "try_timeout": 10}, {"poll_interval": 0}, {"batch": 0}, {"retry_delays": (-1,)}],
)
def test_options_that_would_break_delivery_are_refused(values):
    with pytest.raises(ValueError):
        WebhookOptions(**values)
