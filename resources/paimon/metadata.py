"""What a materialization through ``PaimonIOManager`` reports: the table, the snapshots the write
committed (id and commit kind of the data snapshot, then any compaction), rows, files and bytes
added and removed (from those snapshots' delta manifests), the table's columns and a preview of
the first rows of the materialized partitions. No paths or links: the warehouse may be private to the run's host."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from typing import Any

import dagster as dg
import pyarrow as pa

import lakestore

PREVIEW_ROWS = 5


def committed_snapshots(table: lakestore.Table, commit_user: str, after_id: int | None) -> list[lakestore.Snapshot]:
    """The snapshots ``commit_user`` committed after snapshot ``after_id`` (concurrent writers'
    snapshots in between are skipped)."""
    latest = table.store.snapshot_manager.latest_id()
    if latest is None:
        return []
    first = (after_id or 0) + 1
    found = []
    for snapshot_id in range(first, latest + 1):
        if table.store.snapshot_manager.exists(snapshot_id):
            snapshot = table.snapshot(snapshot_id)
            if snapshot.commit_user == commit_user:
                found.append(snapshot)
    return found


def column_schema(schema: pa.Schema) -> dg.TableSchema:
    return dg.TableSchema(
        columns=[dg.TableColumn(name=f.name, type=str(f.type), constraints=dg.TableColumnConstraints(nullable=f.nullable)) for f in schema]
    )


def _cell(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (dt.date, dt.datetime, dt.time, decimal.Decimal)):
        return str(value)
    return repr(value)


def preview(rows: pa.Table) -> dg.TableMetadataValue:
    """The first ``PREVIEW_ROWS`` rows as a Dagster table (values that are not numbers, strings
    or booleans shown as text)."""
    head = rows.slice(0, PREVIEW_ROWS)
    records = [dg.TableRecord({k: _cell(v) for k, v in row.items()}) for row in head.to_pylist()]
    return dg.MetadataValue.table(records=records, schema=column_schema(rows.schema))


def output_metadata(table: lakestore.Table, snapshots: Sequence[lakestore.Snapshot], *, head: pa.Table | None) -> dict[str, Any]:
    """The materialization metadata of a write that committed ``snapshots`` (data first):
    ``dagster/row_count`` counts the rows the data snapshot added. ``head``: the rows the
    preview shows (None: no preview)."""
    added = {"rows": 0, "files": 0, "bytes": 0}
    removed = {"rows": 0, "files": 0, "bytes": 0}
    data_rows = 0
    for index, snapshot in enumerate(snapshots):
        for f in table.store.delta_files(snapshot):
            side = added if f.kind == "ADD" else removed
            side["rows"] += f.rows
            side["files"] += 1
            side["bytes"] += f.bytes
            if index == 0 and f.kind == "ADD":
                data_rows += f.rows
    meta: dict[str, Any] = {
        "dagster/table_name": table.identifier,
        "dagster/row_count": dg.MetadataValue.int(data_rows),
        "dagster/column_schema": dg.MetadataValue.table_schema(column_schema(table.arrow_schema)),
        "snapshot_id": dg.MetadataValue.int(snapshots[0].id) if snapshots else None,
        "commit_kind": snapshots[0].commit_kind if snapshots else "NONE",
        "snapshot_ids": dg.MetadataValue.json([s.id for s in snapshots]),
        "commit_kinds": dg.MetadataValue.json([s.commit_kind for s in snapshots]),
        "rows_added": added["rows"],
        "rows_removed": removed["rows"],
        "files_added": added["files"],
        "files_removed": removed["files"],
        "bytes_added": added["bytes"],
        "bytes_removed": removed["bytes"],
    }
    if head is not None:
        meta["preview"] = preview(head)
    return {k: v for k, v in meta.items() if v is not None}
