"""lakestore's postpone compaction (lakestore/compact/postpone.py) against a record-by-record
model: postponed upserts and deletes of many writes, compacted per partition or all at once.
Interop with Paimon 2.0.0 Java and Flink: tests/interop/test_java_postpone_buckets.py."""

from __future__ import annotations

import glob
import random

import pyarrow as pa
import pytest

import lakestore
from lakestore.compact import compact_bucket, select_buckets
from lakestore.compact.postpone import bucket_count
from lakestore.errors import SchemaMismatchError, UnsupportedTableError
from lakestore.meta.file_scan import live_entries

SCHEMA = pa.schema(
    [pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()), ("op", pa.string())]
)


def _table(tmp_path, **options: str) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db", exist_ok=True)
    opts = {"bucket": "-2", "rowkind.field": "op", **options}
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=opts)


def _rows(t: lakestore.Table) -> dict[tuple[str, int], int]:
    got = t.to_arrow()
    return dict(zip(zip(got["dt"].to_pylist(), got["id"].to_pylist(), strict=True), got["v"].to_pylist(), strict=True))


def test_bucket_count_follows_paimons_rule():
    known = {b"p": 7}
    assert bucket_count(b"p", known, {b"p": 100}, target_rows=3, default=2) == 7  # a partition keeps its count
    assert bucket_count(b"q", known, {b"q": 10}, target_rows=3, default=2) == 4  # ceil(10 / 3)
    assert bucket_count(b"q", known, {b"q": 9}, target_rows=3, default=2) == 3
    assert bucket_count(b"q", known, {}, target_rows=3, default=2) == 1
    assert bucket_count(b"q", known, {b"q": 10}, target_rows=None, default=2) == 2


def test_many_postponed_writes_compacted_equal_the_model(tmp_path):
    t = _table(tmp_path, **{"postpone.default-bucket-num": "4"})
    rng = random.Random(7)
    model: dict[tuple[str, int], int] = {}
    for step in range(12):
        rows = []
        for _ in range(rng.randrange(1, 40)):
            dt, key, value = rng.choice("abc"), rng.randrange(30), rng.randrange(1000)
            op = "-D" if rng.random() < 0.2 else "+I"
            rows.append((dt, key, value, op))
            if op == "-D":
                model.pop((dt, key), None)
            else:
                model[(dt, key)] = value
        t.write_arrow(pa.table({n: [r[i] for r in rows] for i, n in enumerate(SCHEMA.names)}, schema=SCHEMA))
        if step % 4 == 3:
            # one partition at a time, then the rest: the others stay postponed meanwhile
            before = _rows(t)
            t.compact(partitions=[{"dt": "a"}])
            after = _rows(t)
            assert {k: v for k, v in after.items() if k[0] == "a"} == {k: v for k, v in model.items() if k[0] == "a"}
            assert {k: v for k, v in after.items() if k[0] != "a"} == {k: v for k, v in before.items() if k[0] != "a"}
            t.compact()
            assert _rows(t) == model
    entries = live_entries(t.store.manifests(), t.latest_snapshot())
    assert {e.total_buckets for e in entries} == {4} and {e.bucket for e in entries} <= {0, 1, 2, 3}
    assert t.compact(full=True) and {e.file.level for e in live_entries(t.store.manifests(), t.latest_snapshot())} == {5}
    assert _rows(t) == model
    # nothing postponed and no level-0 files left: nothing to compact
    assert t.compact() == []


def test_rejected_input_leaves_no_postponed_file(tmp_path):
    t = _table(tmp_path)
    with pytest.raises(SchemaMismatchError):
        t.write_arrow(pa.table({"dt": ["a"], "id": [1]}))
    assert t.latest_snapshot() is None
    assert glob.glob(f"{t.path}/**/*.parquet", recursive=True) == []


def test_bucket_by_bucket_compaction_is_refused(tmp_path):
    """Distributed compaction (lakestore.spark.compact) plans buckets: bucket-postpone is no LSM
    bucket, so such tables are compacted as a whole by Table.compact."""
    t = _table(tmp_path)
    t.write_arrow(pa.table({"dt": ["a"], "id": [1], "v": [1], "op": ["+I"]}, schema=SCHEMA))
    [entry] = live_entries(t.store.manifests(), t.latest_snapshot())
    with pytest.raises(UnsupportedTableError, match="compacted as a whole by Table.compact"):
        select_buckets(t.store, t.latest_snapshot(), None)
    with pytest.raises(UnsupportedTableError, match="compacted as a whole by Table.compact"):
        compact_bucket(t.store, entry.partition, entry.bucket, full=True)
    assert t.compact() and _rows(t) == {("a", 1): 1}
