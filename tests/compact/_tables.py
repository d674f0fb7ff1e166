"""Table helpers of the compaction tests."""

from __future__ import annotations

import os

import pyarrow as pa

import lakestore
from lakestore.meta.file_scan import live_entries
from lakestore.meta.manifest import DataFileMeta

PK_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("kind", pa.string())])


def catalog(root) -> lakestore.Catalog:
    c = lakestore.Catalog(str(root))
    c.create_database("db", exist_ok=True)
    return c


def kv(ids, value="x", kind="+I") -> pa.Table:
    ids = list(ids)
    return pa.table({"id": ids, "v": [f"{value}{i}" for i in ids], "kind": [kind] * len(ids)}, schema=PK_SCHEMA)


def live_files(table: lakestore.Table, snapshot=None) -> list[DataFileMeta]:
    snap = snapshot or table.latest_snapshot()
    return [e.file for e in live_entries(table.store.manifests(), snap)]


def parquet_files(table: lakestore.Table) -> set[str]:
    out = set()
    for _d, _, files in os.walk(table.path):
        out |= {f for f in files if f.endswith(".parquet")}
    return out


def sorted_runs_per_bucket(table: lakestore.Table) -> dict[tuple[bytes, int], int]:
    runs: dict[tuple[bytes, int], set] = {}
    for e in live_entries(table.store.manifests(), table.latest_snapshot()):
        bucket_runs = runs.setdefault((e.partition, e.bucket), set())
        bucket_runs.add(("L0", e.file.file_name) if e.file.level == 0 else ("L", e.file.level))
    return {k: len(v) for k, v in runs.items()}


def rows_by_id(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: tuple((k, str(v)) for k, v in r.items()))
