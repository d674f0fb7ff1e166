from __future__ import annotations

import decimal
import json

import pyarrow as pa
import pytest

from lakestore.errors import SchemaChangeError
from lakestore.meta.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SetOption,
    UpdateColumnType,
    UpdateComment,
)


@pytest.fixture
def table(catalog):
    schema = pa.schema(
        [("dt", pa.string()), ("id", pa.int64()), ("n", pa.int32()), ("f", pa.float32()), ("d", pa.decimal128(10, 2)), ("s", pa.string())]
    )
    t = catalog.create_table("db.t", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1"})
    t.write_arrow(
        pa.table(
            {
                "dt": ["a", "a"],
                "id": [1, 2],
                "n": pa.array([1, 2], pa.int32()),
                "f": pa.array([0.5, 1.5], pa.float32()),
                "d": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(10, 2)),
                "s": ["x", "y"],
            }
        )
    )
    return t


def test_widen_rename_drop_add_reads_old_files_by_field_id(catalog, table):
    t = catalog.alter_table(
        "db.t",
        [
            UpdateColumnType("n", "BIGINT"),
            UpdateColumnType("f", pa.float64()),
            UpdateColumnType("d", "DECIMAL(20, 2)"),
            RenameColumn("s", "label"),
            DropColumn("n"),
            AddColumn("n", "INT", after="id"),
            UpdateComment("the table"),
            UpdateComment("a label", column="label"),
            SetOption("snapshot.num-retained.min", "3"),
        ],
    )
    doc = json.load(open(f"{t.path}/schema/schema-1"))
    assert [(f["id"], f["name"], f["type"]) for f in doc["fields"]] == [
        (0, "dt", "STRING NOT NULL"),
        (1, "id", "BIGINT NOT NULL"),
        (6, "n", "INT"),
        (3, "f", "DOUBLE"),
        (4, "d", "DECIMAL(20, 2)"),
        (5, "label", "STRING"),
    ]
    assert doc["highestFieldId"] == 6 and doc["comment"] == "the table"
    assert doc["fields"][5]["description"] == "a label" and doc["options"]["snapshot.num-retained.min"] == "3"
    t.write_arrow(
        pa.table(
            {
                "dt": ["a"],
                "id": [3],
                "n": pa.array([30], pa.int32()),
                "f": [2.5],
                "d": pa.array([decimal.Decimal("3.00")], pa.decimal128(20, 2)),
                "label": ["z"],
            }
        )
    )
    out = t.to_arrow().sort_by("id")
    assert out.schema.field("d").type == pa.decimal128(20, 2)
    assert out.to_pylist() == [
        {"dt": "a", "id": 1, "n": None, "f": 0.5, "d": decimal.Decimal("1.25"), "label": "x"},
        {"dt": "a", "id": 2, "n": None, "f": 1.5, "d": None, "label": "y"},
        {"dt": "a", "id": 3, "n": 30, "f": 2.5, "d": decimal.Decimal("3.00"), "label": "z"},
    ]
    t2 = catalog.alter_table("db.t", [RemoveOption("snapshot.num-retained.min")])
    assert t2.schema.id == 2 and "snapshot.num-retained.min" not in t2.schema.options


@pytest.mark.parametrize(
    "change",
    [
        DropColumn("id"),
        DropColumn("dt"),
        RenameColumn("id", "key"),
        RenameColumn("dt", "day"),
        UpdateColumnType("id", "INT"),
        UpdateColumnType("dt", "INT"),
        UpdateColumnType("n", "SMALLINT"),
        UpdateColumnType("f", "INT"),
        UpdateColumnType("d", "DECIMAL(12, 3)"),
        UpdateColumnType("s", "INT"),
        AddColumn("s", "INT"),
        AddColumn("x", "INT NOT NULL"),
        DropColumn("missing"),
        RenameColumn("s", "n"),
        SetOption("bucket", "4"),
        SetOption("merge-engine", "first-row"),
        SetOption("no.such.option", "1"),
        RemoveOption("bucket"),
    ],
)
def test_forbidden_changes_raise_and_publish_nothing(catalog, table, change):
    with pytest.raises(SchemaChangeError):
        catalog.alter_table("db.t", [change])
    assert table.store.schema_manager.list_ids() == [0]
