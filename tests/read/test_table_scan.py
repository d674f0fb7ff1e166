"""The scan object: ``table.scan(...)`` is an immutable description of a batch read; refining it
returns new scans, running it gives the rows ``Table.to_arrow`` gives for the same arguments."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import lakestore
from lakestore import col
from lakestore.scan import TableScan

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


@pytest.fixture
def table(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    t.write_arrow(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": [1.0, 2.0, 3.0]}, schema=SCHEMA))
    t.write_arrow(pa.table({"dt": ["a", "b"], "id": [1, 4], "v": [10.0, 4.0]}, schema=SCHEMA))  # upsert id 1
    return t


def rows(data: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in data.to_pylist())


def test_refining_returns_new_scans_and_reads_what_to_arrow_reads(table):
    base = table.scan()
    narrowed = base.filter(col("dt") == "a").select("id", "v")
    assert isinstance(narrowed, TableScan) and narrowed is not base
    assert base.spec.filter is None and base.spec.columns is None  # the original is unchanged
    assert rows(narrowed.to_arrow()) == [(1, 10.0), (2, 2.0)]
    assert rows(narrowed.to_arrow()) == rows(table.to_arrow(columns=["id", "v"], filter=col("dt") == "a"))
    both = narrowed.filter(col("id") > 1)
    assert rows(both.to_arrow()) == [(2, 2.0)]
    assert narrowed.count() == 2 and both.count() == 1 and base.count() == 4
    assert [s.bucket for s in narrowed.plan()] and all(s.partition_values == ("a",) for s in narrowed.plan())


def test_time_travel_limit_and_batches(table):
    first = table.scan(snapshot_id=1)
    assert rows(first.to_arrow()) == [("a", 1, 1.0), ("a", 2, 2.0), ("b", 3, 3.0)]
    assert first.count() == 3
    assert table.scan().with_limit(2).to_arrow().num_rows == 2
    batches = list(table.scan(columns=["id"]).to_batches(batch_size=1))
    assert all(b.num_rows <= 1 for b in batches) and sum(b.num_rows for b in batches) == 4
    with pytest.raises(ValueError, match="at most one"):
        table.scan(snapshot_id=1, tag="x")
    with pytest.raises(ValueError, match="limit"):
        table.scan(limit=-1)
    with pytest.raises(lakestore.SchemaMismatchError):
        table.scan().select("nope").to_arrow()


def test_engines_read_a_scan_through_the_arrow_c_stream(table):
    scan = table.scan(columns=["id", "v"]).filter(col("dt") == "b")
    assert sorted(pl.DataFrame(scan).rows()) == [(3, 3.0), (4, 4.0)]
    assert sorted(duckdb.sql("select id, v from scan").fetchall()) == [(3, 3.0), (4, 4.0)]
    lazy = scan.to_polars(lazy=True)
    assert isinstance(lazy, pl.LazyFrame) and lazy.filter(pl.col("id") == 4).collect().rows() == [(4, 4.0)]
    assert sorted(scan.to_duckdb(name="b_rows").fetchall()) == [(3, 3.0), (4, 4.0)]
    assert sorted(table.to_polars(filter=col("dt") == "b").rows()) == [("b", 3, 3.0), ("b", 4, 4.0)]


def test_writes_take_anything_exporting_the_arrow_c_stream(table):
    frame = pl.DataFrame({"dt": ["c"], "id": [5], "v": [5.0]})
    table.write_arrow(frame)
    table.write_arrow(duckdb.sql("select 'c' as dt, 6::bigint as id, 6.0::double as v"))
    assert rows(table.scan(filter=col("dt") == "c").to_arrow()) == [("c", 5, 5.0), ("c", 6, 6.0)]
