"""What a materialization reports in the Dagster UI: the snapshots it committed, rows, files and
bytes added/removed (from the snapshots' delta manifests), the LSM shape of the touched buckets,
and how long it took."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

import lakestore
from assets.common.lsm import partition_label, shape_markdown, table_shape


@dataclass
class CommitStats:
    snapshot_ids: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    rows_added: int = 0
    rows_removed: int = 0
    files_added: int = 0
    files_removed: int = 0
    bytes_added: int = 0
    bytes_removed: int = 0
    touched_partitions: set[str] = field(default_factory=set)  # values of the first partition key


def commit_stats(table: lakestore.Table, snapshots: Iterable[lakestore.Snapshot | None]) -> CommitStats:
    """Add up the delta manifests of ``snapshots`` (None entries are ignored)."""
    stats = CommitStats()
    first_key = table.partition_keys[0] if table.partition_keys else None
    for snap in snapshots:
        if snap is None or snap.id in stats.snapshot_ids:
            continue
        stats.snapshot_ids.append(snap.id)
        stats.kinds.append(snap.commit_kind)
        for f in table.store.delta_files(snap):
            if f.kind == "ADD":
                stats.rows_added += f.rows
                stats.files_added += 1
                stats.bytes_added += f.bytes
            else:
                stats.rows_removed += f.rows
                stats.files_removed += 1
                stats.bytes_removed += f.bytes
            if first_key is not None:
                stats.touched_partitions.add(str(f.partition[first_key]))
    return stats


class Stopwatch:
    def __init__(self) -> None:
        self.started = time.monotonic()

    @property
    def seconds(self) -> float:
        return round(time.monotonic() - self.started, 3)


def materialization_metadata(
    table: lakestore.Table,
    stats: CommitStats,
    watch: Stopwatch,
    *,
    shape_partitions: Sequence[str] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Metadata for ``MaterializeResult``: snapshot, row/file/byte deltas, LSM shape, duration.

    The LSM shape covers ``shape_partitions`` plus every partition the snapshots touched.
    """
    latest = table.latest_snapshot()
    partitions = set(shape_partitions or ()) | stats.touched_partitions
    shapes = table_shape(table, partitions=partitions) if table.partition_keys else table_shape(table)
    meta: dict[str, Any] = {
        "table": table.identifier,
        "table_path": dg.MetadataValue.path(table.path),
        "snapshot_id": dg.MetadataValue.int(stats.snapshot_ids[-1] if stats.snapshot_ids else (latest.id if latest else -1)),
        "snapshot_kind": ", ".join(stats.kinds) if stats.kinds else "none (nothing committed)",
        "snapshots_committed": dg.MetadataValue.int(len(stats.snapshot_ids)),
        "latest_snapshot_id": dg.MetadataValue.int(latest.id if latest else -1),
        "total_records": dg.MetadataValue.int(latest.total_record_count if latest else 0),
        "rows_added": dg.MetadataValue.int(stats.rows_added),
        "rows_removed": dg.MetadataValue.int(stats.rows_removed),
        "files_added": dg.MetadataValue.int(stats.files_added),
        "files_removed": dg.MetadataValue.int(stats.files_removed),
        "bytes_added": dg.MetadataValue.int(stats.bytes_added),
        "bytes_removed": dg.MetadataValue.int(stats.bytes_removed),
        "touched_buckets": dg.MetadataValue.int(len(shapes)),
        "max_sorted_runs": dg.MetadataValue.int(max((s.sorted_runs for s in shapes), default=0)),
        "lsm_shape": dg.MetadataValue.md(shape_markdown(shapes)),
        "duration_s": dg.MetadataValue.float(watch.seconds),
        # the table's columns with their Paimon types (nested ROW/ARRAY/MAP types spelled out)
        "dagster/column_schema": dg.TableSchema(
            columns=[
                dg.TableColumn(f.name, str(f.type), constraints=dg.TableColumnConstraints(nullable=f.type.nullable))
                for f in table.schema.fields
            ]
        ),
    }
    if extra:
        meta.update(extra)
    return meta


__all__ = ["CommitStats", "Stopwatch", "commit_stats", "materialization_metadata", "partition_label"]
