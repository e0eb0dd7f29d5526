"""The demo host with the two custom routes of tests/openapi/demo_app.py, and its document per token."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.openapi.demo_app import report_of_year, report_summary
from tests.support.demo import create_demo, demo_registry
from tests.support.host import Host

DOCUMENT = "/api/pb/v1/openapi.json"


@pytest.fixture
async def site(sqlite_database, host_factory) -> Host:
    """The demo schema and rows on SQLite, served with the demo declarations and two custom routes."""
    await create_demo(sqlite_database)
    return await host_factory(sqlite_database, demo_registry(), routes=[report_summary, report_of_year])


async def document_of(site: Host, scopes: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The document a new token with `scopes` gets."""
    token = await site.token(scopes, name=f"doc-{uuid.uuid4().hex[:8]}")  # hosts may share a database
    answer = await site.client.get(DOCUMENT, headers={**site.auth(token), **(headers or {})})
    assert answer.status_code == 200, answer.text
    return answer.json()


def operations(document: dict[str, Any]) -> set[str]:
    """`METHOD path` of every documented operation."""
    return {f"{method.upper()} {path}" for path, methods in document["paths"].items() for method in methods}
