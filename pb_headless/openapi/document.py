"""Assembles OpenAPI 3.1 documents from the parts of one registry version.

The parts (every object's operations and schemas, the service endpoints, the custom routes) are
built once per snapshot; a request only picks the operations its token may call and joins them,
so a newly published object shows up with the next request, without a restart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pb_headless.custom_routes import RouteDef
from pb_headless.openapi import batch, custom_routes, service
from pb_headless.openapi.changes import change_operations
from pb_headless.openapi.components import security, shared_components
from pb_headless.openapi.filters import GUIDE
from pb_headless.openapi.objects import object_operations, object_tag
from pb_headless.openapi.parts import OperationPart, Parts, Schema, plain_part
from pb_headless.openapi.webhooks import webhook_operations
from pb_headless.state.snapshot import Snapshot, SnapshotCache


class DocumentedApi(Protocol):
    """What the site owner's document needs of the API (a `HeadlessAPI` has it)."""

    title: str
    version: str
    routes: tuple[RouteDef, ...]
    snapshots: SnapshotCache


OPENAPI_VERSION = "3.1.0"
PARTS_KEY = "openapi.parts"
_DESCRIPTION = (
    "A token-protected JSON API. Send the token as `Authorization: Bearer <token>` or `X-API-Key: <token>`. "
    "Lists take `filter[field]=v`, `filter[field][op]=v`, `search`, `sort`, `fields`, `with`, `limit`, "
    "`offset`, `page`, `after`, `before` and `count`; a parameter an operation does not take, or a value it "
    "cannot use, is ignored and named as written in `meta.ignored` (`limt=1`), or refused with a 400 under "
    "`Prefer: handling=strict`. Errors "
    'answer `{"error": <code>, "message": <text>}`. Every answer carries `X-RateLimit-Limit`, '
    "`X-RateLimit-Remaining` and `X-RateLimit-Reset` (`components.headers`).\n\n" + GUIDE
)
_SHARED = shared_components()  # never changed: each document copies the sections it extends


def document_for(
    snapshot: Snapshot,
    routes: Sequence[RouteDef],
    server_url: str,
    has_scope: Callable[[str], bool],
    *,
    title: str,
    version: str,
) -> Schema:
    """A token's document: only what it may call (`has_scope`), `servers` from the request."""
    return assemble(parts_of(snapshot, routes), server_url, has_scope, title=title, version=version)


def full_document(api: DocumentedApi, server_url: str, snapshot: Snapshot | None = None) -> Schema:
    """Every object, operation and custom route, and the webhooks the site sends: the site owner's view
    (docs page, `pb-headless openapi`).

    It documents `snapshot`, by default the one the API compiled last (`await api.startup()` or
    `await api.snapshot()` compiles the current registry version).
    """
    snapshot = snapshot or api.snapshots.current
    if snapshot is None:
        raise RuntimeError("full_document needs the compiled registry: `await api.startup()` first")
    return assemble(
        parts_of(snapshot, api.routes),
        server_url,
        lambda scope: True,
        title=api.title,
        version=api.version,
        webhooks=True,
    )


def parts_of(snapshot: Snapshot, routes: Sequence[RouteDef]) -> Parts:
    """The parts of this snapshot's registry version, built on first use."""
    return snapshot.derive(PARTS_KEY, lambda current: build_parts(current, routes))


def build_parts(snapshot: Snapshot, custom: Sequence[Any]) -> Parts:
    specs = [snapshot.catalog[name] for name in sorted(snapshot.catalog)]
    operations = [*service.service_operations()]
    for spec in specs:
        operations += object_operations(spec)
        operations += change_operations(spec)
        operations += webhook_operations(spec)
        operations += batch.batch_items(spec)
    operations += custom_routes.route_operations(custom)
    tags = (
        service.TAG,
        *(object_tag(spec) for spec in specs),
        batch.TAG,
        *((custom_routes.TAG,) if custom else ()),
    )
    return Parts(tags=tags, operations=tuple(plain_part(part) for part in operations))


def assemble(
    parts: Parts,
    server_url: str,
    has_scope: Callable[[str], bool],
    *,
    title: str,
    version: str,
    webhooks: bool = False,
) -> Schema:
    """Join the operations `has_scope` allows, and with `webhooks` the webhooks the site sends (the
    site owner's document only: pb_headless/openapi/webhooks.py says why). Parts are shared between
    documents and never changed."""
    chosen = [
        part
        for part in parts.operations
        if part.is_callable_with(has_scope) and (webhooks or part.section != "webhooks")
    ]
    components = {section: dict(entries) for section, entries in _SHARED.items()}
    sections: dict[str, dict[str, dict[str, Schema]]] = {"paths": {}, "webhooks": {}}
    chosen = _with_batch(chosen)
    for part in chosen:
        sections[part.section].setdefault(part.path, {})[part.method] = part.operation
        for section, entries in part.components.items():
            components.setdefault(section, {}).update(entries)
    used_tags = {tag for part in chosen for tag in part.operation.get("tags", ())}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": title, "version": version, "description": _DESCRIPTION},
        "servers": [{"url": server_url}],
        "security": security(None),
        "tags": [tag.as_dict() for tag in parts.tags if tag.name in used_tags],
        "paths": sections["paths"],
        **({"webhooks": sections["webhooks"]} if sections["webhooks"] else {}),
        "components": components,
    }


def _with_batch(chosen: list[OperationPart]) -> list[OperationPart]:
    """The batch items a token may send become the one `/batch` operation (none: no `/batch`)."""
    items = [part for part in chosen if part.section == batch.SECTION]
    if not items:
        return chosen
    operation, components = batch.batch_operation(items)
    joined = OperationPart(batch.PATH, "post", None, operation, components)
    return [*(part for part in chosen if part.section != batch.SECTION), joined]


__all__ = [
    "OPENAPI_VERSION",
    "OperationPart",
    "assemble",
    "build_parts",
    "document_for",
    "full_document",
    "parts_of",
]
