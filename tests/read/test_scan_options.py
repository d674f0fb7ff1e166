"""Read-side scan options, lakestore only (the interop cases against Paimon 2.0.0 Java are in
tests/interop/test_java_scan_options.py): incremental reads' planning rules and errors, time
travel from table options, bucket functions' hashing, reads over a fallback branch."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import OptionError, UnsupportedTableError
from lakestore.format.bucket import compute_buckets
from lakestore.format.types import DataType
from lakestore.meta.schema_change import RemoveOption, SetOption
from lakestore.read.predicate import Column
from tests._support import sort_rows

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def rows(ids, tag) -> pa.Table:
    return pa.table({"id": ids, "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture
def table(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(rows([1, 2, 3], "a"))  # 1
    t.write_arrow(rows([2, 4], "b"))  # 2
    t.write_arrow(rows([1, 5], "c"))  # 3
    return t


def values(t: pa.Table) -> list:
    return sorted(t["v"].to_pylist())


def test_delta_reads_every_row_the_snapshots_added(table):
    assert values(table.to_arrow(incremental_between="1,3")) == ["b2", "b4", "c1", "c5"]
    assert values(table.to_arrow(incremental_between=(0, 1))) == ["a1", "a2", "a3"]
    assert table.to_arrow(incremental_between="2,2").num_rows == 0


def test_diff_reads_what_changed_between_two_snapshots(table):
    table.write_arrow(rows([2], "b"))  # 4: the same value again
    # as Paimon's IncrementalDiffSplitRead, each side merges only the files the other lacks: snapshot 2's
    # files are all still live at 4, so b2 (rewritten in 4) is compared with nothing and returned
    assert values(table.to_arrow(incremental_between="2,4", incremental_scan_mode="diff")) == ["b2", "c1", "c5"]
    table.compact(full=True)  # 5: one file per bucket, none shared with snapshot 3
    assert values(table.to_arrow(incremental_between="3,5", incremental_scan_mode="diff")) == []
    table.manage.create_tag("t1", 1)
    table.manage.create_tag("t4", 4)
    assert values(table.to_arrow(incremental_between="t1,t4")) == ["b2", "b4", "c1", "c5"]


def test_incremental_filter_projection_limit_and_batches(table):
    got = table.to_arrow(incremental_between="0,3", columns=["v"], filter=Column("id") >= 2, limit=10)
    assert got.column_names == ["v"] and values(got) == ["a2", "a3", "b2", "b4", "c5"]
    assert table.to_arrow(incremental_between="0,3", limit=2).num_rows == 2
    batches = list(table.to_batches(incremental_between="0,3", batch_size=2))
    assert all(b.num_rows <= 2 for b in batches) and sum(b.num_rows for b in batches) == 7


def test_incremental_errors(table):
    with pytest.raises(ValueError, match="start"):
        table.to_arrow(incremental_between="1")
    with pytest.raises(ValueError, match="should be >="):
        table.to_arrow(incremental_between="3,1")
    with pytest.raises(ValueError, match="out of the available range"):
        table.to_arrow(incremental_between="1,9")
    with pytest.raises(ValueError, match="not two snapshot ids"):
        table.to_arrow(incremental_between="x,y")
    with pytest.raises(ValueError, match="not both"):
        table.to_arrow(incremental_between="1,2", snapshot_id=1)
    with pytest.raises(ValueError, match="scan-mode"):
        table.to_arrow(incremental_between="1,2", incremental_scan_mode="sideways")


def test_incremental_between_timestamp(table):
    times = [s.time_millis for s in table.snapshots()]
    assert values(table.to_arrow(incremental_between_timestamp=(times[0], times[2]))) == ["b2", "b4", "c1", "c5"]
    assert values(table.to_arrow(incremental_between_timestamp=(times[0] - 10_000, times[0]))) == ["a1", "a2", "a3"]
    assert table.to_arrow(incremental_between_timestamp=(times[2] + 1, times[2] + 5)).num_rows == 0


def test_table_options_steer_batch_reads(catalog, table):
    t = catalog.alter_table("db.t", [SetOption("incremental-between", "1,2")])
    assert values(t.to_arrow()) == ["b2", "b4"]
    assert values(t.to_arrow(snapshot_id=1)) == ["a1", "a2", "a3"]  # per-read arguments win
    with pytest.raises(UnsupportedTableError, match="incremental-between"):
        t.stream()
    t = catalog.alter_table("db.t", [RemoveOption("incremental-between"), SetOption("scan.snapshot-id", "1")])
    assert values(t.to_arrow()) == ["a1", "a2", "a3"]
    t = catalog.alter_table("db.t", [RemoveOption("scan.snapshot-id"), SetOption("scan.mode", "latest")])
    assert values(t.to_arrow()) == ["a3", "b2", "b4", "c1", "c5"]  # latest: the other scan options do not apply
    t = catalog.alter_table("db.t", [SetOption("scan.mode", "compacted-full")])
    with pytest.raises(UnsupportedTableError, match="scan.mode"):
        t.to_arrow()


def test_scan_snapshot_id_table_option_reads_that_snapshot(catalog, table):
    t = catalog.alter_table("db.t", [SetOption("scan.snapshot-id", "2")])
    assert values(t.to_arrow()) == ["a1", "a3", "b2", "b4"]
    assert len(t.scan().plan()) >= 1
    t.write_arrow(rows([9], "z"))  # writes are not affected
    assert values(t.to_arrow(snapshot_id=t.latest_snapshot().id))[-1] == "z9"


def _types(*roots: str) -> list[DataType]:
    return [DataType(r) for r in roots]


def test_mod_bucket_function_is_floor_mod():
    keys = pa.array([-7, -1, 0, 1, 5, None], pa.int64())
    assert compute_buckets(_types("BIGINT"), [keys], 3, "mod").tolist() == [2, 2, 0, 1, 2, 0]
    with pytest.raises(OptionError, match="INT or BIGINT"):
        compute_buckets(_types("VARCHAR"), [pa.array(["a"])], 3, "mod")
    with pytest.raises(OptionError, match="single"):
        compute_buckets(_types("INT", "INT"), [pa.array([1], pa.int32())] * 2, 3, "mod")


def test_hive_bucket_function_hashes_as_hive():
    # "abc": ((97 * 31) + 98) * 31 + 99 = 96354; 96354 % 7 = 4
    assert compute_buckets(_types("VARCHAR"), [pa.array(["abc"])], 7, "hive").tolist() == [96354 % 7]
    # a composite key: 31 * hash(a) + hash(b); a BIGINT hashes as Long.hashCode
    big = 2**40 + 5
    expected = (31 * ((big ^ (big >> 32)) & 0xFFFFFFFF) + 3) & 0x7FFFFFFF
    got = compute_buckets(_types("BIGINT", "INT"), [pa.array([big], pa.int64()), pa.array([3], pa.int32())], 1000, "hive")
    assert got.tolist() == [expected % 1000]
    # decimals hash as BigDecimal without trailing zeros: 1.500 as 1.5 (unscaled 15, scale 1)
    dec = pa.array([decimal.Decimal("1.500")], pa.decimal128(10, 3))
    assert compute_buckets([DataType("DECIMAL", precision=10, scale=3)], [dec], 1000, "hive").tolist() == [(31 * 15 + 1) % 1000]
    with pytest.raises(OptionError, match="TIMESTAMP"):
        compute_buckets([DataType("TIMESTAMP", precision=6)], [pa.array([1], pa.timestamp("us"))], 3, "hive")


def test_bucket_function_table_writes_and_prunes(catalog):
    t = catalog.create_table("db.m", schema=SCHEMA, primary_keys=["id"], options={"bucket": "4", "bucket-function.type": "mod"})
    t.write_arrow(rows(list(range(-8, 8)), "x"))
    for split in t.scan().plan():
        ids = t.store.split_reader().read(split, ["id"], None)["id"].to_numpy()
        assert (np.mod(ids, 4) == split.bucket).all()
    assert t.to_arrow(filter=Column("id") == -3)["v"].to_pylist() == ["x-3"]


def test_fallback_branch_reads_missing_partitions(catalog):
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    t = catalog.create_table("db.p", schema=schema, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "1"})
    t.write_arrow(pa.table({"dt": ["a", "b"], "id": [1, 1], "v": ["main-a", "main-b"]}, schema=schema))
    t.manage.create_branch("fb").write_arrow(pa.table({"dt": ["b", "c"], "id": [1, 1], "v": ["fb-b", "fb-c"]}, schema=schema))
    t = catalog.alter_table("db.p", [SetOption("scan.fallback-branch", "fb")])
    assert sort_rows(t.to_arrow(columns=["v"])) == [{"v": "fb-c"}, {"v": "main-a"}, {"v": "main-b"}]
    assert t.to_arrow(filter=Column("dt") == "c")["v"].to_pylist() == ["fb-c"]
    t = catalog.alter_table("db.p", [SetOption("scan.fallback-branch", "nope")])
    assert sorted(t.to_arrow()["v"].to_pylist()) == ["main-a", "main-b"]  # Paimon logs a missing branch and reads one
    t = catalog.alter_table("db.p", [SetOption("scan.fallback-branch", ""), SetOption("scan.primary-branch", "fb")])
    assert sorted(t.to_arrow()["v"].to_pylist()) == ["fb-b", "fb-c", "main-a"]
