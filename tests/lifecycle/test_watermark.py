"""Time travel, tags and rollback by watermark (Paimon's ``scan.watermark``: the first snapshot
whose watermark reached the given one; rollback: the last snapshot at or before it)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import SnapshotNotFoundError

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


@pytest.fixture
def table(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(pa.table({"id": [1], "v": ["none"]}, schema=SCHEMA))  # snapshot 1: no watermark
    for snapshot_watermark, ids in ((100, [2]), (200, [3]), (300, [4])):
        t.write_arrow(pa.table({"id": ids, "v": [f"w{snapshot_watermark}"]}, schema=SCHEMA), watermark=snapshot_watermark)
    return t


def ids(table: pa.Table) -> list[int]:
    return sorted(table["id"].to_pylist())


def test_read_at_a_watermark_takes_the_first_snapshot_that_reached_it(table):
    assert [s.watermark for s in table.snapshots()] == [None, 100, 200, 300]
    assert ids(table.to_arrow(watermark=100)) == [1, 2]
    assert ids(table.to_arrow(watermark=150)) == [1, 2, 3]
    assert ids(table.to_arrow(watermark=300)) == [1, 2, 3, 4]
    with pytest.raises(SnapshotNotFoundError, match="watermark"):
        table.to_arrow(watermark=301)
    with pytest.raises(ValueError, match="at most one"):
        table.to_arrow(watermark=100, snapshot_id=2)


def test_tag_and_rollback_by_watermark(table):
    tag = table.create_tag("w", watermark=150)
    assert tag.snapshot_id == 3
    rolled = table.rollback_to(watermark=250)  # the last snapshot whose watermark is <= 250
    assert rolled.id == 3 and table.latest_snapshot().id == 3
    assert ids(table.to_arrow()) == [1, 2, 3]
    with pytest.raises(SnapshotNotFoundError):
        table.rollback_to(watermark=50)
