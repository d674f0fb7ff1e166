"""pypaimon reads lakestore's tags, rolled-back and evolved tables, and lakestore reads
pypaimon-evolved tables (time travel by timestamp: tests/read/test_time_travel.py)."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from lakestore.meta.schema_change import AddColumn, DropColumn, RenameColumn
from tests.lifecycle.conftest import SCHEMA, batch, rows
from tests.oracle.driver import oracle_alter, oracle_available, oracle_read, oracle_write

# a time after every snapshot of the test session: time retention never protects them
LATER_MS = int(time.time() * 1000) + 86_400_000

pytestmark = [pytest.mark.oracle, pytest.mark.skipif(not oracle_available(), reason="oracle venv missing")]


def test_pypaimon_reads_tags_and_expired_tagged_snapshot(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    t.write_arrow(batch("a", range(5), 1.0))
    t.write_arrow(batch("a", range(3), 2.0))
    t.manage.create_tag("first", 1)
    t.manage.create_tag("second", time_retained="7 d")
    expect_first = rows(t.to_arrow(snapshot_id=1))
    t.write_arrow(batch("b", range(4), 3.0), overwrite=True)
    t.write_arrow(batch("b", range(2), 4.0))
    t.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    assert [s.id for s in t.snapshots()] == [4]
    assert rows(oracle_read(t.path, tag="first")) == expect_first
    assert rows(oracle_read(t.path, tag="second")) == rows(t.to_arrow(tag="second"))
    assert rows(oracle_read(t.path)) == rows(t.to_arrow())


def test_pypaimon_reads_rolled_back_table(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    t.write_arrow(batch("a", range(5), 1.0))
    t.manage.create_tag("v1")
    expect = rows(t.to_arrow())
    t.write_arrow(batch("a", range(5), 2.0), overwrite=True)
    t.write_arrow(batch("c", range(2), 3.0))
    t.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    t.manage.rollback_to(tag="v1")  # snapshot 1 had expired: restored from the tag
    assert rows(oracle_read(t.path)) == expect
    assert rows(oracle_read(t.path, snapshot_id=1)) == expect
    t.write_arrow(batch("z", [9], 9.0))
    assert rows(oracle_read(t.path)) == rows(t.to_arrow())
    assert rows(oracle_read(t.path, tag="v1")) == expect


def test_pypaimon_reads_lakestore_evolved_table(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"})
    t.write_arrow(batch("a", range(3), 1.0))
    t = catalog.alter_table("db.t", [RenameColumn("v", "value"), AddColumn("extra", pa.int64())])
    t.write_arrow(pa.table({"dt": ["a"], "id": [7], "value": [7.0], "extra": [70]}))
    t = catalog.alter_table("db.t", [DropColumn("extra"), AddColumn("note", "STRING", first=True)])
    t.write_arrow(pa.table({"note": ["n"], "dt": ["a"], "id": [1], "value": [11.0]}))
    ours = t.to_arrow()
    assert ours.column_names == ["note", "dt", "id", "value"]
    theirs = oracle_read(t.path)
    assert theirs.column_names == ours.column_names
    assert rows(theirs) == rows(ours) == [("n", "a", 1, 11.0), (None, "a", 0, 1.0), (None, "a", 2, 1.0), (None, "a", 7, 7.0)]


def test_lakestore_reads_pypaimon_evolved_table(catalog, tmp_path):
    wh = catalog.warehouse
    oracle_write(wh, "db.p", batch("a", range(3), 1.0), primary_keys=("dt", "id"), partition_keys=("dt",), options={"bucket": "1"})
    oracle_alter(wh, "db.p", [["rename", "v", "value"], ["add", "extra", "BIGINT"]])
    oracle_write(wh, "db.p", pa.table({"dt": ["a"], "id": pa.array([5], pa.int64()), "value": [5.0], "extra": pa.array([50], pa.int64())}))
    oracle_alter(wh, "db.p", [["drop", "extra"]])
    t = catalog.get_table("db.p")
    assert t.schema.id == 2 and t.schema.field_names == ["dt", "id", "value"]
    assert rows(t.to_arrow()) == rows(oracle_read(t.path)) == [("a", 0, 1.0), ("a", 1, 1.0), ("a", 2, 1.0), ("a", 5, 5.0)]
