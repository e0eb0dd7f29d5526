"""Load for the cluster checks: clients that keep requesting while a check breaks something.

Each worker is one client with its own connections; it changes its forwarded address every
`PER_ADDRESS` requests, so the rate limit (per client) never refuses it and every answer shows what
the instances did, not what the limiter did.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass

import httpx

from tests.cluster.harness import API, client, new_client

PER_ADDRESS = 50


@dataclass(frozen=True)
class Answer:
    sent: float  # time.monotonic() when the request left
    done: float  # ... and when its answer (or failure) arrived
    status: int  # 0: no HTTP answer at all
    error: str | None  # the error envelope's code, or the exception's name
    retry_after: str | None
    row_id: int | None  # the id a 201 acknowledged


class Load:
    """`async with Load(base, token, workers=8) as load:` ... `load.answers` once the block ends.

    Reads are lists of articles; with `writes=True` every other request creates an article titled
    `cluster-load-<n>`, so the check can compare acknowledged creates with the rows stored.
    """

    def __init__(self, base: str, token: str, *, workers: int, writes: bool = False) -> None:
        self.base, self.token, self.workers, self.writes = base, token, workers, writes
        self.answers: list[Answer] = []
        self._running = True
        self._numbers = itertools.count()
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Load:
        self._tasks = [asyncio.create_task(self._worker()) for _ in range(self.workers)]
        return self

    async def __aexit__(self, *_: object) -> None:
        self._running = False
        await asyncio.gather(*self._tasks)

    async def _worker(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with client() as http:
            count = 0
            while self._running:
                if count % PER_ADDRESS == 0:
                    headers.update(new_client())
                count += 1
                write = self.writes and count % 2 == 0
                self.answers.append(await self._one(http, headers, write))

    async def _one(self, http: httpx.AsyncClient, headers: dict[str, str], write: bool) -> Answer:
        sent = time.monotonic()
        try:
            if write:
                body = {"title": f"cluster-load-{next(self._numbers)}", "category": "news"}
                response = await http.post(self.base + API + "/objects/articles", json=body, headers=headers)
            else:
                response = await http.get(
                    self.base + API + "/objects/articles?limit=5&sort=-id", headers=headers
                )
        except httpx.HTTPError as error:
            return Answer(sent, time.monotonic(), 0, type(error).__name__, None, None)
        return answer_of(response, sent)


def answer_of(response: httpx.Response, sent: float) -> Answer:
    error = row_id = None
    try:
        payload = response.json()
    except ValueError:
        payload = {}
    if response.status_code >= 400:
        error = payload.get("error") if isinstance(payload, dict) else None
        error = error or "(no error envelope)"
    elif response.status_code == 201:
        row_id = payload["data"]["id"]
    return Answer(
        sent, time.monotonic(), response.status_code, error, response.headers.get("Retry-After"), row_id
    )


async def create_articles(
    base: str, token: str, *, clients: int, total: int, label: str
) -> list[tuple[int, int | None, str]]:
    """`total` creates from `clients` concurrent clients: (status, acknowledged id, title) each."""

    async def one_client(number: int) -> list[tuple[int, int | None, str]]:
        results = []
        headers = {"Authorization": f"Bearer {token}"}
        async with client() as http:
            for index in range(number, total, clients):
                if len(results) % PER_ADDRESS == 0:
                    headers.update(new_client())
                title = f"cluster-{label}-{index}"
                response = await http.post(
                    base + API + "/objects/articles",
                    headers=headers,
                    json={"title": title, "category": "guides"},
                )
                answer = answer_of(response, 0.0)
                results.append((answer.status, answer.row_id, title))
        return results

    done = await asyncio.gather(*(one_client(number) for number in range(clients)))
    return [result for results in done for result in results]
