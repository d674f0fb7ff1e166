"""A batch write of no rows, as Paimon 2.0.0 Java commits it: nothing by default, an empty
APPEND snapshot with ``snapshot.ignore-empty-commit`` = ``false``, and an OVERWRITE snapshot for an
overwrite either way. lakestore's ``write_arrow`` and Java's batch write, on twin tables, leave the
same snapshots, and each engine reads the other's."""

from __future__ import annotations

import pyarrow as pa
import pytest

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])


@pytest.mark.parametrize("ignore_empty", [None, "false", "true"])
def test_empty_batch_writes_commit_as_javas(java, catalog, warehouse, ignore_empty):
    options = {"bucket": "1"} | ({"snapshot.ignore-empty-commit": ignore_empty} if ignore_empty else {})
    ours = catalog.create_table("db.ours", schema=SCHEMA, primary_keys=["id"], options=options)
    java.create_table(warehouse, "db.theirs", SCHEMA, primary_keys=["id"], options=options)
    rows = pa.table({"id": [1], "v": [1]}, schema=SCHEMA)
    steps = [(rows, None), (SCHEMA.empty_table(), None), (SCHEMA.empty_table(), {}), (rows, None), (SCHEMA.empty_table(), None)]
    for data, overwrite in steps:
        ours.write_arrow(data, overwrite=True if overwrite == {} else None)
        java.write(warehouse, "db.theirs", data, overwrite=overwrite)
    kinds = [s.commit_kind for s in catalog.get_table("db.ours").snapshots()]
    assert kinds == [s["commit_kind"] for s in java.snapshots(warehouse, "db.theirs")]
    empty_appends = 2 if ignore_empty == "false" else 0
    assert kinds.count("APPEND") == 2 + empty_appends and kinds.count("OVERWRITE") == 1
    assert java.read(warehouse, "db.ours").to_pylist() == [{"id": 1, "v": 1}]
    assert catalog.get_table("db.theirs").to_arrow().to_pylist() == [{"id": 1, "v": 1}]
