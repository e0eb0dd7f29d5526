"""The document of a fixed demo host, pinned: any change to the public contract shows up in review.

After an intended change, rewrite the snapshot and review its diff:
    PB_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/openapi/test_snapshot.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pb_headless.openapi import full_document
from tests.openapi.conftest import document_of

SNAPSHOT = Path(__file__).parent / "snapshots" / "demo.json"


def as_snapshot(document: dict) -> str:
    # The package version moves with every release; the contract it describes does not.
    document = {**document, "info": {**document["info"], "version": "<version>"}}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


async def test_the_document_of_the_demo_host_matches_its_snapshot(site):
    current = as_snapshot(await document_of(site, "*"))
    if os.environ.get("PB_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(current, encoding="utf-8")
    assert current == SNAPSHOT.read_text(encoding="utf-8"), (
        "the OpenAPI document changed; if intended, rerun with PB_UPDATE_SNAPSHOTS=1 and review the diff"
    )


WEBHOOKS_SNAPSHOT = Path(__file__).parent / "snapshots" / "demo-webhooks.json"


async def test_the_webhooks_of_the_site_owners_document_match_their_snapshot(site):
    """The `webhooks` the full document adds (a token's document has none), with their components."""
    document = full_document(site.api, "http://testserver/api/pb/v1", await site.api.snapshot())
    components = document["components"]
    pinned = {
        "webhooks": document["webhooks"],
        "components": {
            "parameters": {k: v for k, v in components["parameters"].items() if k.startswith("webhooks.")},
            "responses": {k: v for k, v in components["responses"].items() if k.startswith("webhooks.")},
            "schemas": {k: v for k, v in components["schemas"].items() if k.endswith(".Webhook")},
        },
    }
    current = json.dumps(pinned, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("PB_UPDATE_SNAPSHOTS") == "1":
        WEBHOOKS_SNAPSHOT.write_text(current, encoding="utf-8")
    assert current == WEBHOOKS_SNAPSHOT.read_text(encoding="utf-8"), (
        "the webhooks in the OpenAPI document changed; if intended, rerun with PB_UPDATE_SNAPSHOTS=1"
    )
