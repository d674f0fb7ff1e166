"""Time travel (``lakestore.scan.time_travel``): reads at a timestamp or a watermark, and the
snapshot and tag resolution working on a branch's snapshots and tags alone, without a store."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import SnapshotNotFoundError, TagNotFoundError
from lakestore.io.fileio import FileIO, LocalFileIO
from lakestore.lifecycle.branches import create_branch
from lakestore.lifecycle.tags import TagManager
from lakestore.meta.branch import branch_root
from lakestore.meta.snapshot import SnapshotManager
from lakestore.scan.time_travel import resolve, scan_from_options, snapshot_at, snapshot_at_watermark
from tests.oracle.driver import oracle_available, oracle_read

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def rows(table: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def batch(dt: str, ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


def test_time_travel_by_timestamp(catalog):
    t = catalog.create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1", "write-only": "true"}
    )
    s1 = t.write_arrow(batch("a", [1], 1.0))
    time.sleep(0.01)
    s2 = t.write_arrow(batch("a", [2], 2.0))
    assert rows(t.to_arrow(timestamp_ms=s1.time_millis)) == [("a", 1, 1.0)]
    assert rows(t.to_arrow(timestamp_ms=s2.time_millis + 5)) == [("a", 1, 1.0), ("a", 2, 2.0)]
    with pytest.raises(SnapshotNotFoundError):
        t.to_arrow(timestamp_ms=s1.time_millis - 1)
    with pytest.raises(ValueError):
        t.to_arrow(tag="x", snapshot_id=1)


WATERMARK_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_read_at_a_watermark_takes_the_first_snapshot_that_reached_it(catalog):
    """Paimon's ``scan.watermark``: the first snapshot whose watermark reached the given one."""
    table = catalog.create_table("db.w", schema=WATERMARK_SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1], "v": ["none"]}, schema=WATERMARK_SCHEMA))  # snapshot 1: no watermark
    for snapshot_watermark, ids in ((100, [2]), (200, [3]), (300, [4])):
        table.write_arrow(pa.table({"id": ids, "v": [f"w{snapshot_watermark}"]}, schema=WATERMARK_SCHEMA), watermark=snapshot_watermark)

    def ids(read: pa.Table) -> list[int]:
        return sorted(read["id"].to_pylist())

    assert [s.watermark for s in table.snapshots()] == [None, 100, 200, 300]
    assert ids(table.to_arrow(watermark=100)) == [1, 2]
    assert ids(table.to_arrow(watermark=150)) == [1, 2, 3]
    assert ids(table.to_arrow(watermark=300)) == [1, 2, 3, 4]
    with pytest.raises(SnapshotNotFoundError, match="watermark"):
        table.to_arrow(watermark=301)
    with pytest.raises(ValueError, match="at most one"):
        table.to_arrow(watermark=100, snapshot_id=2)


@dataclass(frozen=True)
class Versions:
    """A branch's snapshots and tags, and nothing else of a table."""

    path: str
    file_io: FileIO
    metadata_path: str
    snapshot_manager: SnapshotManager

    @classmethod
    def of(cls, table_path: str, branch: str = "main") -> Versions:
        io = LocalFileIO()
        root = branch_root(table_path, branch)
        return cls(table_path, io, root, SnapshotManager(io, root))


def test_resolution_reads_only_the_branch_snapshots_and_tags(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, options={"bucket": "-1"})
    s1 = t.write_arrow(batch("a", [1], 1.0))
    time.sleep(0.01)
    s2 = t.write_arrow(batch("a", [2], 2.0), watermark=100)
    s3 = t.write_arrow(batch("a", [3], 3.0), watermark=200)
    TagManager(t.store).create("v1", s1.id)
    create_branch(t.store, "dev", tag="v1")  # the branch holds snapshot 1 and its own copy of v1
    TagManager(t.store).create("v3", s3.id)  # on main only

    main = Versions.of(t.path)
    assert [resolve(main, **kw).id for kw in ({}, {"tag": "v1"}, {"tag": "v3"}, {"snapshot_id": 2})] == [s3.id, s1.id, s3.id, s2.id]
    assert snapshot_at(main, s2.time_millis).id == s2.id
    assert snapshot_at_watermark(main, 150).id == s3.id
    assert snapshot_at_watermark(main, 150, at_or_before=True).id == s2.id
    with pytest.raises(TagNotFoundError, match="'v9'"):
        resolve(main, tag="v9")
    # scan.version names a tag of the branch, a watermark, else a snapshot id
    assert scan_from_options(main, {"scan.version": "v3"}).travel == {"tag": "v3"}
    assert scan_from_options(main, {"scan.version": "watermark-150"}).travel == {"watermark": 150}
    assert scan_from_options(main, {"scan.version": "2"}).travel == {"snapshot_id": 2}
    with pytest.raises(SnapshotNotFoundError, match="no such tag"):
        scan_from_options(main, {"scan.version": "v9"})

    dev = Versions.of(t.path, "dev")
    assert resolve(dev).id == resolve(dev, tag="v1").id == s1.id
    with pytest.raises(TagNotFoundError, match="'v3'"):
        resolve(dev, tag="v3")
    with pytest.raises(SnapshotNotFoundError, match="no such tag"):
        scan_from_options(dev, {"scan.version": "v3"})
    # the store of a table is one such object: a read at the tag returns its rows
    assert rows(t.to_arrow(tag="v1")) == [("a", 1, 1.0)]
    assert resolve(t.store, tag="v3").id == s3.id


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason="oracle venv missing")
def test_pypaimon_time_travels_by_timestamp(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, options={"bucket": "-1"})
    s1 = t.write_arrow(batch("a", [1], 1.0))
    t.write_arrow(batch("a", [2], 2.0))
    assert rows(oracle_read(t.path, timestamp_millis=s1.time_millis)) == rows(t.to_arrow(timestamp_ms=s1.time_millis)) == [("a", 1, 1.0)]
