"""Tags and rollback by watermark: a tag takes the first snapshot whose watermark reached the
given one (as Paimon's ``scan.watermark``), a rollback the last snapshot at or before it. Reads
at a watermark are in tests/read/test_time_travel.py."""

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


def test_tag_and_rollback_by_watermark(table):
    tag = table.manage.create_tag("w", watermark=150)
    assert tag.snapshot_id == 3
    rolled = table.manage.rollback_to(watermark=250)  # the last snapshot whose watermark is <= 250
    assert rolled.id == 3 and table.latest_snapshot().id == 3
    assert ids(table.to_arrow()) == [1, 2, 3]
    with pytest.raises(SnapshotNotFoundError):
        table.manage.rollback_to(watermark=50)
