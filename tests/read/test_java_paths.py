"""Data-file paths, snapshots and postpone buckets against Apache Paimon 2.0's Java core: external
paths, file prefixes, compression suffix and a data directory written by either engine and read,
compacted and continued by the other; lakestore's snapshots as 2.0 reads them."""

from __future__ import annotations

import glob
import json
import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.file_scan import live_entries
from tests._support import sort_rows
from tests.oracle.java_driver import java_oracle

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])


def _batch(dt: str, ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


def _same(got: pa.Table, expected: pa.Table) -> None:
    got = got.select(expected.column_names)
    assert sort_rows(got, ["dt", "id"]) == sort_rows(expected, ["dt", "id"])


def _options(tmp_path) -> dict[str, str]:
    return {
        "bucket": "2",
        "file.format": "parquet",
        "data-file.external-paths": f"file://{tmp_path}/ext1,file://{tmp_path}/ext2",
        "data-file.external-paths.strategy": "round-robin",
        "data-file.prefix": "d-",
        "file.suffix.include.compression": "true",
        "data-file.path-directory": "data",
    }


def _entries(t):
    return live_entries(t.store.manifests(), t.latest_snapshot())


@pytest.mark.parametrize("creator", ["lakestore", "java"])
def test_external_paths_and_names_both_ways(tmp_path, creator):
    java = java_oracle()
    warehouse = tmp_path / "wh"
    options = _options(tmp_path)
    if creator == "lakestore":
        catalog = lakestore.Catalog(str(warehouse))
        catalog.create_database("db")
        catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)
    else:
        java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    t.write_arrow(_batch("a", range(10), 1.0))
    java.write(warehouse, "db.t", _batch("a", range(5), 2.0))
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    t.write_arrow(_batch("b", range(3), 3.0))
    expected = t.to_arrow()
    assert expected.num_rows == 13
    _same(java.read(warehouse, "db.t"), expected)
    # both engines' files: outside the table, with the configured names, _EXTERNAL_PATH as Java spells it
    assert glob.glob(f"{t.path}/**/*.parquet", recursive=True) == []
    for e in _entries(t):
        assert e.file.file_name.startswith("d-") and e.file.file_name.endswith(".zst.parquet")
        assert e.file.external_path.startswith(f"file:{tmp_path}/ext")
        assert "/data/dt=" in e.file.external_path
    # Java compacts lakestore's files and lakestore compacts Java's
    java.compact(warehouse, "db.t")
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    _same(t.to_arrow(), expected)
    java.write(warehouse, "db.t", _batch("b", [1], 4.0))
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    t.compact(full=True)
    expected = t.to_arrow()
    assert expected.filter(pa.compute.equal(expected["dt"], "b")).sort_by("id")["v"].to_pylist() == [3.0, 4.0, 3.0]
    _same(java.read(warehouse, "db.t"), expected)
    # expiration by lakestore removes the external files only expired snapshots held
    t.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0)
    files = {os.path.normpath(p) for p in glob.glob(f"{tmp_path}/ext*/**/*.parquet", recursive=True)}
    assert files == {os.path.normpath(e.file.external_path[len("file:") :]) for e in _entries(t)}
    _same(java.read(warehouse, "db.t"), expected)


def test_lakestore_snapshots_read_by_paimon_2(tmp_path):
    java = java_oracle()
    warehouse = tmp_path / "wh"
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("db")
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"})
    t.write_arrow(_batch("a", [1, 2], 1.0))
    java.write(warehouse, "db.t", _batch("a", [3], 2.0))
    t = catalog.get_table("db.t")
    t.write_arrow(_batch("a", [4], 3.0))
    ours = json.loads(java.snapshot_json(warehouse, "db.t", 3))
    theirs = json.loads(java.snapshot_json(warehouse, "db.t", 2))
    # the same fields in the same order as Paimon 2.0 writes them (lakestore writes no writer-specific ones)
    assert [k for k in ours if k in theirs] == [k for k in theirs if k in ours]
    assert set(theirs) - set(ours) <= {"changelogManifestList", "changelogManifestListSize", "indexManifest", "operation", "properties"}
    assert ours["uuid"] != theirs["uuid"] and "logOffsets" not in ours
    assert ours["nextRowId"] == theirs["nextRowId"] == 0
    assert [s["id"] for s in java.snapshots(warehouse, "db.t")] == [1, 2, 3]
    _same(java.read(warehouse, "db.t"), t.to_arrow())


def test_postpone_bucket_table_read_as_java_reads_it(tmp_path):
    # writes and compaction of such tables: tests/interop/test_java_postpone_buckets.py
    java = java_oracle()
    warehouse = tmp_path / "wh"
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "-2"})
    java.write(warehouse, "db.t", _batch("a", [1], 1.0))
    assert glob.glob(f"{warehouse}/db.db/t/dt=a/bucket-postpone/*")
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    # rows in bucket-postpone are invisible to batch reads until a compaction assigns buckets
    assert t.to_arrow().num_rows == 0 == java.read(warehouse, "db.t").num_rows
