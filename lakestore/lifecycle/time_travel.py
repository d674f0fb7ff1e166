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


# Paimon writes Long.MIN_VALUE for "no watermark".
_NO_WATERMARK = -9223372036854775808


def snapshot_at_watermark(table: Table, watermark: int, *, at_or_before: bool = False) -> Snapshot:
    """The first snapshot whose watermark is at or after ``watermark`` (Paimon's
    ``scan.watermark``), or with ``at_or_before`` the last one at or before it (its
    rollback-to-watermark). Snapshots without a watermark never match."""
    manager = table.snapshot_manager
    ids = manager.list_ids()
    for snapshot_id in reversed(ids) if at_or_before else ids:
        snapshot = manager.get(snapshot_id)
        mark = snapshot.watermark
        if mark is None or mark == _NO_WATERMARK:
            continue
        if (mark <= watermark) if at_or_before else (mark >= watermark):
            return snapshot
    relation = "at or before" if at_or_before else "at or after"
    raise SnapshotNotFoundError(f"no retained snapshot of {table.path} has a watermark {relation} {watermark}")


def resolve(
    table: Table,
    *,
    snapshot_id: int | None = None,
    tag: str | None = None,
    timestamp_ms: int | None = None,
    watermark: int | None = None,
) -> Snapshot | None:
    given = [x is not None for x in (snapshot_id, tag, timestamp_ms, watermark)]
    if sum(given) > 1:
        raise ValueError("give at most one of snapshot_id=, tag=, timestamp_ms=, watermark=")
    if watermark is not None:
        return snapshot_at_watermark(table, watermark)
    if tag is not None:
        return TagManager(table).get(tag).snapshot
    if timestamp_ms is not None:
        return snapshot_at(table, timestamp_ms)
    if snapshot_id is not None:
        return table.snapshot_manager.get(snapshot_id)
    return table.latest_snapshot()
