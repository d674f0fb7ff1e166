"""Postpone-bucket tables (``bucket = -2``) against Apache Paimon 2.0.0: lakestore's postponed
writes and its postpone compaction (lakestore/write/postpone.py, lakestore/compact/postpone.py).

Paimon's Java core writes postponed rows but does not compact them (only Flink's and Spark's
compact actions do): the reference compaction here is Flink's (``CALL sys.compact`` with Paimon
2.0.0's connector), run on a copy of the same table.

a. lakestore and Java write postponed rows (upserts and ``-D`` rows through ``rowkind.field``)
   into one table, alternately; neither engine's batch read sees them; lakestore's compaction
   assigns buckets (``postpone.default-bucket-num`` for new partitions, the existing count for
   the others) and Java reads exactly the rows a record-by-record model expects; a second round
   continues the table.
b. The same writes on two copies, one compacted by lakestore and one by Flink, twice over: the
   same rows, the same keys in each bucket and the same files per bucket and level, with
   ``postpone.target-row-num-per-bucket`` choosing the bucket count of new partitions.
"""

from __future__ import annotations

import re
import shutil
import time
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.file_scan import live_entries
from tests._support import assert_same_rows
from tests.oracle.flink_driver import FlinkOracle, flink_oracle

SCHEMA = pa.schema(
    [pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64()), ("op", pa.string())]
)
OPTIONS = {"bucket": "-2", "rowkind.field": "op", "postpone.default-bucket-num": "3"}
Model = dict[tuple[str, int], float | None]


def _batch(rows: list[tuple[str, int, float | None, str]]) -> pa.Table:
    return pa.table({name: [r[i] for r in rows] for i, name in enumerate(SCHEMA.names)}, schema=SCHEMA)


def _apply(model: Model, rows: list[tuple[str, int, float | None, str]]) -> None:
    for dt, key, value, op in rows:
        if op == "-D":
            model.pop((dt, key), None)
        else:
            model[(dt, key)] = value


def _rows(table: pa.Table) -> Model:
    return {(d, k): v for d, k, v in zip(table["dt"].to_pylist(), table["id"].to_pylist(), table["v"].to_pylist(), strict=True)}


def _entries(t: lakestore.Table) -> list[Any]:
    return live_entries(t.store.manifests(), t.latest_snapshot())


ROUND_1 = [
    ("lakestore", [("a", i, float(i), "+I") for i in range(1, 9)] + [("b", 1, 1.0, "+I"), ("b", 2, 2.0, "+I")]),
    ("java", [("a", 1, 10.0, "+I"), ("a", 2, None, "-D"), ("c", 1, 5.0, "+I"), ("a", 1, 11.0, "+U")]),
    ("lakestore", [("a", 3, 30.0, "+U"), ("b", 2, None, "-D"), ("a", 2, 22.0, "+I"), ("a", 3, 31.0, "+U")]),
]
ROUND_2 = [
    ("java", [("a", 4, 40.0, "+I"), ("d", 1, 1.0, "+I"), ("c", 1, None, "-D")]),
    ("lakestore", [("a", 5, None, "-D"), ("d", 2, 2.0, "+I"), ("a", 4, 41.0, "+U"), ("e", 1, 1.0, "+I")]),
]


def _write(engine: str, java: Any, warehouse: Any, rows: list[tuple[str, int, float | None, str]]) -> None:
    if engine == "java":
        java.write(warehouse, "db.t", _batch(rows))
    else:
        lakestore.Catalog(str(warehouse)).get_table("db.t").write_arrow(_batch(rows))


def test_postponed_writes_of_both_engines_compacted_by_lakestore_read_by_java(java, tmp_path):
    warehouse = tmp_path / "wh"
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("db")
    catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=OPTIONS)
    model: Model = {}
    for engine, rows in ROUND_1:
        _write(engine, java, warehouse, rows)
        _apply(model, rows)
    t = catalog.get_table("db.t")
    entries = _entries(t)
    assert {(e.bucket, e.total_buckets, e.file.level) for e in entries} == {(-2, -2, 0)}
    ours = [e.file for e in entries if e.file.file_name.endswith(".parquet")]
    theirs = [e.file for e in entries if e.file.file_name.endswith(".avro")]  # Paimon Java's postponed files
    assert len(ours) == 4 and len(theirs) == 2
    users = {s.id: s.commit_user for s in t.snapshots()}
    name = re.compile(rf"data--u-({users[1]}|{users[3]})-s-\d+-w-[0-9a-f-]{{36}}-0\.parquet")
    for f in ours:
        assert name.fullmatch(f.file_name), f.file_name
        assert (f.min_sequence_number, f.max_sequence_number, f.value_stats_cols) == (-1, -1, ())
    # the rows are in bucket-postpone: neither engine's batch read sees them
    assert t.to_arrow().num_rows == 0 == java.read(warehouse, "db.t").num_rows

    [compacted] = t.compact()
    assert compacted.commit_kind == "COMPACT"
    entries = _entries(t)
    assert {e.bucket for e in entries} <= {0, 1, 2} and {e.total_buckets for e in entries} == {3}
    assert _rows(java.read(warehouse, "db.t")) == model == _rows(t.to_arrow())

    for engine, rows in ROUND_2:
        _write(engine, java, warehouse, rows)
        _apply(model, rows)
    t = catalog.get_table("db.t")
    assert _rows(java.read(warehouse, "db.t")) != model  # round 2 is still postponed
    [compacted] = t.compact(full=True)
    assert {e.total_buckets for e in _entries(t)} == {3} and {e.file.level for e in _entries(t)} == {5}
    assert _rows(java.read(warehouse, "db.t")) == model == _rows(t.to_arrow())
    assert_same_rows(t.to_arrow(), java.read(warehouse, "db.t"), ["dt", "id"])


@pytest.fixture(scope="module")
def flink() -> FlinkOracle:
    return flink_oracle()


def _flink_compact(flink: FlinkOracle, warehouse: Any) -> None:
    t = lakestore.Catalog(str(warehouse)).get_table("db.t")
    before = t.latest_snapshot()
    flink.use_warehouse(warehouse)
    flink.sql("CALL sys.compact(`table` => 'db.t')", mode="batch")  # submits the batch job
    deadline = time.monotonic() + 120
    while True:
        latest = t.latest_snapshot()
        if latest is not None and latest.id != (before.id if before else None) and latest.commit_kind == "COMPACT":
            return
        assert time.monotonic() < deadline, "Flink's postpone compaction committed nothing"
        time.sleep(0.3)


def _layout(t: lakestore.Table) -> list[tuple[Any, ...]]:
    """(partition, bucket, total buckets, level) of every live file. Row counts and sequence
    ranges may differ: lakestore's writers drop the -D rows of a bucket with no older files,
    Paimon's keep them."""
    return sorted((e.partition, e.bucket, e.total_buckets, e.file.level) for e in _entries(t))


def _keys_by_bucket(t: lakestore.Table) -> dict[tuple[Any, ...], list[int]]:
    snapshot = t.latest_snapshot()
    assert snapshot is not None
    return {(values, bucket): sorted(keys["id"].to_pylist()) for values, bucket, keys in t._live_keys(snapshot)}


@pytest.mark.flink
def test_compaction_matches_flinks_postpone_compaction(java, flink, tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "flink"
    catalog = lakestore.Catalog(str(ours))
    catalog.create_database("db")
    # new partitions get ceil(postponed rows / 3) buckets (a: 14 rows, 5 buckets; b, c, then d, e: 1)
    options = {**OPTIONS, "postpone.target-row-num-per-bucket": "3"}
    catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)
    model: Model = {}
    for engine, rows in ROUND_1:
        _write(engine, java, ours, rows)
        _apply(model, rows)
    for round_rows in (None, ROUND_2):
        if round_rows is not None:
            for engine, rows in round_rows:
                for warehouse in (ours, theirs):
                    _write(engine, java, warehouse, rows)
                _apply(model, rows)
        else:
            shutil.copytree(ours, theirs)
        lakestore.Catalog(str(ours)).get_table("db.t").compact()
        _flink_compact(flink, theirs)
        t_ours = lakestore.Catalog(str(ours)).get_table("db.t")
        t_theirs = lakestore.Catalog(str(theirs)).get_table("db.t")
        assert _layout(t_ours) == _layout(t_theirs)
        assert _keys_by_bucket(t_ours) == _keys_by_bucket(t_theirs)
        assert _rows(t_ours.to_arrow()) == model == _rows(t_theirs.to_arrow()) == _rows(java.read(ours, "db.t"))
    counts = {e.partition: e.total_buckets for e in _entries(t_ours)}
    assert sorted(counts.values()) == [1, 1, 1, 1, 5]
