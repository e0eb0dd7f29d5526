"""A scripted app as an app developer writes one, on the client openapi-python-client generated from a
live server's /openapi.json (the package `pb_client`, on the path): no casts, no `type: ignore`, no
type of its own; `mypy --strict` checks it with the generated package (tests/openapi/test_client_apps.py).

    python app.py <api root> <token>

It prints what it saw as one JSON line; the test compares that with the database.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pb_client import AuthenticatedClient
from pb_client.api.articles import (
    changes_articles,
    create_articles,
    list_articles,
    show_articles,
    update_articles,
)
from pb_client.api.batch import batch
from pb_client.models import (
    ArticlesBatchCreate,
    ArticlesBatchCreateData,
    ArticlesBatchData,
    ArticlesBatchDelete,
    ArticlesBatchUpdate,
    ArticlesCreate,
    ArticlesList,
    ArticlesSingle,
    ArticlesUpdate,
    BatchBody,
    BatchError,
    BatchRef,
    BatchResponse200,
    ChangesArticlesResponse200,
    Error,
)
from pb_client.types import Response


def page(answer: Response[Any], step: str) -> ArticlesList:
    if not isinstance(answer.parsed, ArticlesList):
        raise SystemExit(f"{step}: HTTP {answer.status_code} {answer.content!r}")
    return answer.parsed


def record(answer: Response[Any], step: str) -> ArticlesSingle:
    if not isinstance(answer.parsed, ArticlesSingle):
        raise SystemExit(f"{step}: HTTP {answer.status_code} {answer.content!r}")
    return answer.parsed


def error(answer: Response[Any], step: str) -> Error:
    """The answer's error envelope, decoded as the document's `Error`."""
    if not isinstance(answer.parsed, Error):
        raise SystemExit(f"{step}: expected an error, got HTTP {answer.status_code} {answer.content!r}")
    return answer.parsed


def listed(client: AuthenticatedClient) -> dict[str, Any]:
    # `filter[category]` is the argument `filtercategory`; page 2 by `page`: no `offset` goes with it.
    news = page(list_articles.sync_detailed(client=client, filtercategory="news", sort="id"), "filter")
    second = page(list_articles.sync_detailed(client=client, sort="id", limit=2, page=2), "page 2")
    uncounted = page(list_articles.sync_detailed(client=client, count="none", limit=2), "count=none")
    return {
        "filtered": [article.id for article in news.data],
        "title_lengths": [len(article.title) for article in news.data],  # NOT NULL: a str
        "page_two": [article.id for article in second.data],
        "page_two_offset": second.meta.offset,
        "uncounted_total": uncounted.meta.total,
        "uncounted_has_more": uncounted.meta.has_more,
    }


def walked(client: AuthenticatedClient) -> dict[str, Any]:
    """Every row once, following `meta.next_cursor` until it is None."""
    ids: list[int] = []
    ignored: list[str] = []
    current = page(list_articles.sync_detailed(client=client, sort="id", limit=2), "cursor walk")
    while True:
        ids += [article.id for article in current.data]
        if isinstance(current.meta.ignored, list):  # present only when something was dropped
            ignored += current.meta.ignored
        cursor = current.meta.next_cursor
        if cursor is None:
            break
        answer = list_articles.sync_detailed(client=client, sort="id", limit=2, after=cursor)
        current = page(answer, "cursor walk")
    return {"walked": ids, "walk_ignored": ignored}


def written(client: AuthenticatedClient, start: str) -> dict[str, Any]:
    body = ArticlesCreate(title="Written by the Python app", body="openapi-python-client")
    key = "python-app-create"
    first = create_articles.sync_detailed(client=client, body=body, idempotency_key=key)
    created = record(first, "create")
    again = create_articles.sync_detailed(client=client, body=body, idempotency_key=key)
    replayed = record(again, "replay")
    tag = first.headers["etag"]
    rename = ArticlesUpdate(title="Renamed by the Python app")
    renamed = update_articles.sync_detailed(created.data.id, client=client, body=rename, if_match=tag)
    lost = ArticlesUpdate(title="Lost")
    stale = update_articles.sync_detailed(created.data.id, client=client, body=lost, if_match=tag)
    feed = changes_articles.sync_detailed(client=client, since=start).parsed
    if not isinstance(feed, ChangesArticlesResponse200):
        raise SystemExit("changes: no feed")
    return {
        "created": created.data.id,
        "created_status": int(first.status_code),
        "replayed": replayed.data.id,
        "replayed_header": again.headers.get("idempotent-replayed"),
        "renamed_status": int(renamed.status_code),
        "renamed_title": record(renamed, "update").data.title,
        "stale_status": int(stale.status_code),
        "stale_error": error(stale, "stale update").error,
        "changes": [
            [entry.op.value, entry.id, None if entry.record is None else entry.record.title]
            for entry in feed.data
        ],
    }


def refused(client: AuthenticatedClient) -> dict[str, Any]:
    missing = show_articles.sync_detailed(99999, client=client)
    envelope = error(missing, "missing record")
    return {
        "missing_status": int(missing.status_code),
        "missing_error": envelope.error,
        "missing_message": envelope.message,
    }


def batched(client: AuthenticatedClient) -> dict[str, Any]:
    """A batch creates a record with a label, renames it through `{"$ref": label}` as its `id` and
    deletes another; then a batch that fails at its second operation writes nothing."""
    doomed = record(
        create_articles.sync_detailed(client=client, body=ArticlesCreate(title="Doomed")), "doomed"
    )
    draft = ArticlesBatchCreateData(title="Batched by the Python app", body="python batch")
    rename = ArticlesBatchData(title="Renamed in the Python batch")
    operations = BatchBody(
        operations=[
            ArticlesBatchCreate(op="create", object_="articles", data=draft, label="draft"),
            ArticlesBatchUpdate(op="update", object_="articles", id=BatchRef(ref="draft"), data=rename),
            ArticlesBatchDelete(op="delete", object_="articles", id=doomed.data.id),
        ]
    )
    answer = batch.sync_detailed(client=client, body=operations)
    if not isinstance(answer.parsed, BatchResponse200):
        raise SystemExit(f"batch: HTTP {answer.status_code} {answer.content!r}")
    results = answer.parsed.data
    created, renamed = results[0].data, results[1].data
    if created is None or renamed is None:
        raise SystemExit(f"batch: no record in {answer.content!r}")
    lost = ArticlesBatchCreateData(title="Never written by the Python app", body="python batch")
    missing = ArticlesBatchData(title="Lost")
    failing = BatchBody(
        operations=[
            ArticlesBatchCreate(op="create", object_="articles", data=lost),
            ArticlesBatchUpdate(op="update", object_="articles", id=99999, data=missing),
        ]
    )
    refused = batch.sync_detailed(client=client, body=failing)
    if not isinstance(refused.parsed, BatchError):
        raise SystemExit(f"failing batch: HTTP {refused.status_code} {refused.content!r}")
    return {
        "batch_statuses": [result.status.value for result in results],
        "batch_created": created["id"],
        "batch_renamed": [renamed["id"], renamed["title"]],
        "batch_etags": [result.etag is not None for result in results],
        "batch_deleted": doomed.data.id,
        "failed_batch": [int(refused.status_code), refused.parsed.error, refused.parsed.operation],
    }


def main(base: str, token: str) -> None:
    with AuthenticatedClient(base_url=base, token=token) as client:
        now = changes_articles.sync_detailed(client=client).parsed
        if not isinstance(now, ChangesArticlesResponse200):
            raise SystemExit("changes: no cursor for now")
        report = {**listed(client), **walked(client), **written(client, now.meta.next_), **refused(client)}
        report.update(batched(client))
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
