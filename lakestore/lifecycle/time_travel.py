"""Time travel: the snapshot a read sees for a snapshot id, a tag name or a timestamp
(Paimon's ``scan.snapshot-id`` / ``scan.tag-name`` / ``scan.timestamp-millis``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakestore.errors import SnapshotNotFoundError
from lakestore.lifecycle.tags import TagManager
from lakestore.meta.snapshot import Snapshot

if TYPE_CHECKING:
    from lakestore.table import Table


def snapshot_at(table: Table, timestamp_ms: int) -> Snapshot:
    """The latest snapshot committed at or before ``timestamp_ms`` (binary search over ids:
    commit times grow with ids)."""
    manager = table.snapshot_manager
    ids = manager.list_ids()
    lo, hi, found = 0, len(ids) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        snapshot = manager.get(ids[mid])
        if snapshot.time_millis <= timestamp_ms:
            found, lo = snapshot, mid + 1
        else:
            hi = mid - 1
    if found is None:
        raise SnapshotNotFoundError(
            f"no snapshot of {table.path} was committed at or before {timestamp_ms} (earliest retained: {ids[0] if ids else None})"
        )
    return found


def resolve(table: Table, *, snapshot_id: int | None = None, tag: str | None = None, timestamp_ms: int | None = None) -> Snapshot | None:
    given = [x is not None for x in (snapshot_id, tag, timestamp_ms)]
    if sum(given) > 1:
        raise ValueError("give at most one of snapshot_id=, tag=, timestamp_ms=")
    if tag is not None:
        return TagManager(table).get(tag).snapshot
    if timestamp_ms is not None:
        return snapshot_at(table, timestamp_ms)
    if snapshot_id is not None:
        return table.snapshot_manager.get(snapshot_id)
    return table.latest_snapshot()
