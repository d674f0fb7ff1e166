"""The latest Iceberg metadata never names a data file lakestore deleted: a tag deleted after
its snapshot expired takes its files, so its Iceberg snapshot must go too."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyiceberg.table import StaticTable

import lakestore
from tests.iceberg.readers import latest_metadata, metadata_json

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.float64())])


def _batch(ids: range) -> pa.Table:
    return pa.table({"id": list(ids), "v": [1.0] * len(ids)}, schema=SCHEMA)


def _every_snapshot_readable(metadata: str) -> dict[int, int]:
    """Iceberg snapshot id -> rows, each snapshot scanned (its data files read) by pyiceberg."""
    table = StaticTable.from_metadata(metadata)
    return {s["snapshot-id"]: table.scan(snapshot_id=s["snapshot-id"]).to_arrow().num_rows for s in metadata_json(metadata)["snapshots"]}


def test_deleting_the_tag_of_an_expired_snapshot_leaves_the_iceberg_metadata(tmp_path: Path) -> None:
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, options={"metadata.iceberg.storage": "table-location"})
    table.write_arrow(_batch(range(0, 2)))
    table.write_arrow(_batch(range(2, 5)), overwrite=True)  # snapshot 1's file is only snapshot 1's
    table.manage.create_tag("keep", snapshot_id=1)
    table.write_arrow(_batch(range(5, 6)))
    table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1)
    metadata_dir = tmp_path / "db.db" / "t" / "metadata"
    assert _every_snapshot_readable(latest_metadata(metadata_dir)) == {1: 2, 3: 4}  # the tag keeps snapshot 1
    table.manage.delete_tag("keep")  # snapshot 1's data file goes with the tag
    assert _every_snapshot_readable(latest_metadata(metadata_dir)) == {3: 4}
    table.write_arrow(_batch(range(6, 7)))
    assert _every_snapshot_readable(latest_metadata(metadata_dir)) == {3: 4, 4: 5}
