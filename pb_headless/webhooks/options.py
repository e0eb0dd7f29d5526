"""How the delivery worker behaves: the retry schedule and its other timings (docs/webhooks.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from pb_headless.webhooks.sender import TRY_TIMEOUT

# After the first try fails: about 10 s, 1 min, 5 min, 30 min, 2 h, 6 h and 12 h, then failed.
RETRY_DELAYS: tuple[float, ...] = (10, 60, 300, 1800, 7200, 21600, 43200)


@dataclass(frozen=True)
class WebhookOptions:
    """`HeadlessAPI(webhooks=WebhookOptions(...))`; the defaults are the documented behaviour.

    - `retry_delays`: seconds to wait after each failed try; when they run out the delivery is failed.
    - `disable_after`: an endpoint whose deliveries have all failed for this long is disabled, with a note.
    - `poll_interval`: how often an idle worker looks for new changes and due tries (seconds).
    - `try_timeout`: a try without a 2xx answer within this many seconds has failed.
    - `lease`: how long a claimed try belongs to the instance that claimed it; one killed mid-try
      leaves it to be tried again after this (longer than `try_timeout`).
    - `batch`: at most this many tries run at once per instance.
    - `per_endpoint`: at most this many of them go to one endpoint, so that a receiver that hangs
      holds only its own share while the others' deliveries go on at their pace.
    - `keep_log`: finished deliveries older than this leave the delivery log.
    """

    retry_delays: tuple[float, ...] = RETRY_DELAYS
    disable_after: timedelta = timedelta(days=3)
    poll_interval: float = 1.0
    try_timeout: float = TRY_TIMEOUT
    lease: float = 60.0
    batch: int = 20
    per_endpoint: int = 4
    keep_log: timedelta = timedelta(days=30)

    def __post_init__(self) -> None:
        if self.poll_interval <= 0 or self.try_timeout <= 0 or self.batch < 1 or self.per_endpoint < 1:
            raise ValueError(
                "poll_interval and try_timeout are positive seconds; batch and per_endpoint are at least 1"
            )
        if self.lease <= self.try_timeout:
            raise ValueError("lease must be longer than try_timeout, or a slow try would be sent twice")
        if any(delay < 0 for delay in self.retry_delays):
            raise ValueError("retry_delays are seconds, none negative")

    def next_delay(self, tries: int) -> float | None:
        """The wait after the `tries`-th failed try, or None when it was the last."""
        return self.retry_delays[tries - 1] if tries <= len(self.retry_delays) else None
