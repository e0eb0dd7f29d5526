"""The request mix of bench/soak.py: which kinds of request, how often, and the one status each must get.

Reads are lists (filters, search, relations, pages), shows and `/me`; writes create, update and
delete rows the sending client made itself (so two clients never race on a row), as many deletes as
creates and no author on them, so the data, and with it every answer, stays the same size (a growing
table would make answers grow, and memory with them, whatever the server does); a few requests ask
for an error on purpose: bad tokens (401), unknown records and objects (404), invalid bodies (422).
"""

from __future__ import annotations

import itertools
from collections import deque

from keepalive_client import KeepAliveClient, Response

from pb_headless.tokens.format import generate

# (kind, share out of 100). Every kind not in EXPECTED must get 200.
MIX = [
    ("list", 14),
    ("list_filtered", 10),
    ("list_search", 8),
    ("list_with", 5),
    ("list_page", 4),
    ("show", 20),
    ("show_fields", 5),
    ("authors_with", 4),
    ("me", 3),
    ("create", 6),
    ("update", 6),
    ("delete", 6),
    ("bad_token", 3),
    ("unknown_record", 3),
    ("unknown_object", 1),
    ("invalid_body", 2),
]
EXPECTED = {
    "create": 201,
    "delete": 204,
    "bad_token": 401,
    "unknown_record": 404,
    "unknown_object": 404,
    "invalid_body": 422,
}
GETS = {
    "list": "/objects/articles?sort=-id",
    "list_filtered": "/objects/articles?filter[category]=news&filter[price][gte]=10&sort=price",
    "list_search": "/objects/articles?search=обзор кофе&fields=title,category",
    "list_with": "/objects/articles?with=author&limit=20",
    "list_page": "/objects/articles?page=2&limit=5&sort=title",
    "authors_with": "/objects/authors?with=articles",
    "me": "/me",
    "unknown_record": "/objects/articles/999999999",
    "unknown_object": "/objects/no-such-object",
}


def schedule(total: int) -> list[str]:
    """The kinds of `total` requests: MIX repeated, interleaved so every stretch has every kind."""
    cycle = [kind for kind, share in MIX for _ in range(share)]
    assert len(cycle) == 100, "MIX shares must add up to 100"
    cycle = [cycle[(n * 37) % 100] for n in range(100)]  # 37 is prime to 100: a permutation
    return [cycle[n % 100] for n in range(total)]


_forgeries = itertools.count()


def expected_status(kind: str, response: Response) -> int:
    if kind in ("update", "delete") and response.request.method == "POST":
        return 201  # the client had nothing to change yet: it created instead
    return EXPECTED.get(kind, 200)


async def send(
    http: KeepAliveClient, kind: str, headers: dict[str, str], mine: deque[int], label: str
) -> Response:
    if kind in ("update", "delete") and not mine:
        kind = "create"  # nothing of this client's to change yet
    if kind in GETS:
        return await http.get(GETS[kind], headers=headers)
    if kind in ("show", "show_fields"):
        row = mine[-1] if mine else 1
        suffix = "?fields=title,price&with=author" if kind == "show_fields" else ""
        return await http.get(f"/objects/articles/{row}{suffix}", headers=headers)
    if kind == "create":
        body = {
            "title": f"soak {label}",
            "body": "soak body " * 20,
            "category": "guides",
            "price": "12.50",
        }
        response = await http.post("/objects/articles", json=body, headers=headers)
        if response.status_code == 201:
            mine.append(response.json()["data"]["id"])
        return response
    if kind == "update":
        return await http.patch(f"/objects/articles/{mine[-1]}", json={"price": "13.75"}, headers=headers)
    if kind == "delete":
        return await http.delete(f"/objects/articles/{mine.popleft()}", headers=headers)
    if kind == "bad_token":
        # Every other one well-formed (looked up, not found), the others noise (refused unread).
        value = generate() if next(_forgeries) % 2 else "pb_" + "x" * 46
        forged = {**headers, "Authorization": f"Bearer {value}"}
        return await http.get("/objects/articles", headers=forged)
    if kind == "invalid_body":
        return await http.post("/objects/articles", json={"title": "", "category": "x"}, headers=headers)
    raise ValueError(kind)
