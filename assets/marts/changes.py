"""The change a day's ingestion made to a main table, as before/after images of the keys it
touched: the pipeline's changelog until lakestore offers changelog-producer reads through a
consumer id. The before image is the snapshot just before the ingestion commit, so the diff is
exactly that commit's effect, whatever order days are ingested in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import lakestore
from assets.common.days import day_number
from assets.landing.tpch import landing_dir
from assets.lifecycle.keys import ingest_user


@dataclass(frozen=True)
class DayChange:
    day: str
    snapshot_id: int
    before: pa.Table
    after: pa.Table


def touched_keys(landing_root: str, table: str, day: str, keys: list[str]) -> pa.Table:
    files = sorted(Path(landing_dir(landing_root, table, day)).glob("*.parquet"))
    if not files:
        return pa.table({k: [] for k in keys})
    return pa.concat_tables([pq.read_table(f, columns=keys) for f in files]).group_by(keys).aggregate([])


def day_change(table: lakestore.Table, landing_root: str, day: str, keys: list[str], columns: list[str]) -> DayChange | None:
    """Before/after rows (``columns``) of the keys the ingestion of ``day`` touched; None when
    nothing was ingested that day. Raises if the ingestion commit or its parent has expired."""
    snapshot = table.snapshot_manager.find_committed(ingest_user(table.identifier.split(".")[-1]), day_number(day), "APPEND", after_id=None)
    if snapshot is None:
        return None
    touched = touched_keys(landing_root, table.identifier.split(".")[-1], day, keys)
    dts = sorted(set(touched.column("dt").to_pylist()))
    where = lakestore.col("dt").isin(dts)
    after = table.to_arrow(columns=columns, filter=where, snapshot_id=snapshot.id)
    if snapshot.id > 1:
        try:
            before = table.to_arrow(columns=columns, filter=where, snapshot_id=snapshot.id - 1)
        except lakestore.SnapshotNotFoundError as exc:
            raise RuntimeError(
                f"{table.identifier}: snapshot {snapshot.id - 1} (before the ingestion of {day}) has expired; "
                "raise snapshot.num-retained.min or run the marts in the same run as ingestion"
            ) from exc
    else:
        before = after.schema.empty_table()
    return DayChange(day, snapshot.id, _semi(before, touched, keys), _semi(after, touched, keys))


def _semi(rows: pa.Table, keys_table: pa.Table, keys: list[str]) -> pa.Table:
    if rows.num_rows == 0 or keys_table.num_rows == 0:
        return rows.schema.empty_table()
    joined = rows.join(keys_table.cast(pa.schema([rows.schema.field(k) for k in keys])), keys=keys, join_type="left semi")
    return joined.select(rows.schema.names).cast(rows.schema)  # joins drop NOT NULL; keep one schema
