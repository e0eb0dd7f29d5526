"""What the webhook store answers: an endpoint and a delivery as people and programs read them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from pb_headless.database.dialect import as_aware


@dataclass(frozen=True, slots=True)
class WebhookInfo:
    """An endpoint; never its secret."""

    id: int
    name: str
    url: str
    objects: tuple[str, ...]  # ("*",) is every object
    events: tuple[str, ...]
    enabled: bool
    note: str | None  # why the library disabled it
    failing_since: datetime | None
    created_at: datetime
    last_status: str | None  # of the newest delivery: pending | success | failed
    last_try_at: datetime | None
    last_error: str | None = None  # why the newest failed try failed, while the endpoint is failing
    filter: str | None = None  # a list's filters and search as a query string (`filter[category]=news`)

    @property
    def failing(self) -> bool:
        """Its last try failed (a delivery waiting for a retry included) and none succeeded since."""
        return self.failing_since is not None

    def wants(self, object_name: str, event: str) -> bool:
        return event in self.events and ("*" in self.objects or object_name in self.objects)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "url": self.url,
            "objects": list(self.objects),
            "events": list(self.events),
            "filter": self.filter,
            "enabled": self.enabled,
            "note": self.note,
            "last_delivery_status": self.last_status,
            "last_try_at": _iso(self.last_try_at),
            "failing": self.failing,
            "failing_since": _iso(self.failing_since),
            "last_error": self.last_error,
            "created_at": _iso(self.created_at),
        }


@dataclass(frozen=True, slots=True)
class DeliveryInfo:
    """One line of the delivery log."""

    id: int
    webhook_id: int
    message_id: str
    object_name: str
    event: str
    row_key: str
    status: str
    tries: int
    answer_code: int | None
    duration_ms: int | None
    error: str | None
    next_try_at: datetime | None
    last_try_at: datetime | None
    changed_at: datetime
    created_at: datetime  # when the delivery was made: fanned out from the change log, or a test sent

    @property
    def type(self) -> str:
        return f"{self.object_name}.{self.event}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "message_id": self.message_id,
            "event": self.type,
            "record_id": self.row_key,
            "status": self.status,
            "answer_code": self.answer_code,
            "duration_ms": self.duration_ms,
            "tries": self.tries,
            "next_try_at": _iso(self.next_try_at) if self.status == "pending" else None,
            "last_try_at": _iso(self.last_try_at),
            "error": self.error,
            "changed_at": _iso(self.changed_at),
            "created_at": _iso(self.created_at),
        }


Statuses = Mapping[int, tuple[str, datetime | None, str | None]]  # endpoint → newest status, try, error


def webhook_from_row(row: Mapping[str, Any], statuses: Statuses) -> WebhookInfo:
    status, last_try, error = statuses.get(row["id"], (None, None, None))
    failing_since = as_aware(row["failing_since"])
    return WebhookInfo(
        id=row["id"],
        name=row["name"],
        url=row["url"],
        objects=tuple(orjson.loads(row["objects"])),
        events=tuple(orjson.loads(row["events"])),
        enabled=bool(row["enabled"]),
        note=row["note"],
        failing_since=failing_since,
        created_at=as_aware(row["created_at"]) or datetime.now(UTC),
        last_status=status,
        last_try_at=as_aware(last_try),
        last_error=error if failing_since is not None else None,
        filter=row["filter"],
    )


def delivery_from_row(row: Mapping[str, Any]) -> DeliveryInfo:
    return DeliveryInfo(
        id=int(row["id"]),
        webhook_id=row["webhook_id"],
        message_id=row["message_id"],
        object_name=row["object_name"],
        event=row["event"],
        row_key=row["row_key"],
        status=row["status"],
        tries=int(row["tries"]),
        answer_code=row["answer_code"],
        duration_ms=row["duration_ms"],
        error=row["error"],
        next_try_at=as_aware(row["next_try_at"]),
        last_try_at=as_aware(row["last_try_at"]),
        changed_at=as_aware(row["changed_at"]) or datetime.now(UTC),
        created_at=as_aware(row["created_at"]) or datetime.now(UTC),
    )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None
