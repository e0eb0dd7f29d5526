"""The change log and what reads it (docs/changes.md): `ChangeLog`, its one owner (the triggers that
record every committed change of a published table, and every read of the log, under one rule),
`TriggerSync` keeping the triggers in step with the catalog, the feed's pages, and the live stream's
`StreamHub`. Its HTTP endpoints are the API layer's (api/changes.py).
"""

from __future__ import annotations

from pb_headless.changes.cursor import decode_cursor, encode_cursor
from pb_headless.changes.hub import StreamHub
from pb_headless.changes.log import Bounds, Change, ChangeLog
from pb_headless.changes.sync import TriggerSync

__all__ = [
    "Bounds",
    "Change",
    "ChangeLog",
    "StreamHub",
    "TriggerSync",
    "decode_cursor",
    "encode_cursor",
]
