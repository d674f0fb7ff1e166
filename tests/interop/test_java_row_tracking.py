"""Row tracking and data evolution against Paimon 2.0.0 Java (the reference) and pypaimon 2.1:
tables either engine writes, read by the other row for row with ``_ROW_ID`` and
``_SEQUENCE_NUMBER`` (Java's ``$row_tracking`` system table); data-evolution tables whose newer
files hold some columns of older rows (Java's ``withWriteType`` + a preset ``_FIRST_ROW_ID``,
pypaimon's ``update_by_arrow_with_row_id``), merged column-wise."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import UnsupportedTableError
from tests.oracle.driver import oracle_available, oracle_python, oracle_read, oracle_write

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("a", pa.string()), ("b", pa.int32())])
TRACKING = {"row-tracking.enabled": "true", "bucket": "-1"}
EVOLUTION = {**TRACKING, "data-evolution.enabled": "true"}
COLUMNS = ["dt", "id", "a", "b", "_ROW_ID", "_SEQUENCE_NUMBER"]


def rows(dts: list[str], ids: list[int]) -> pa.Table:
    return pa.table({"dt": dts, "id": ids, "a": [f"a{i}" for i in ids], "b": [i * 10 for i in ids]}, schema=SCHEMA)


def by_row_id(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r["_ROW_ID"])


def java_tracking(java, warehouse: Path, identifier: str = "db.t") -> list[dict]:
    return by_row_id(java.read(warehouse, f"{identifier}$row_tracking"))


def lake_tracking(catalog: lakestore.Catalog, identifier: str = "db.t", **kwargs) -> list[dict]:
    return by_row_id(catalog.get_table(identifier).to_arrow(columns=COLUMNS, **kwargs))


WRITES = [(["b", "a", "b", "c"], [1, 2, 3, 4]), (["a", "c", "j", "8"], [5, 6, 7, 8]), (["a"], [9])]


def test_java_row_tracking_table_read_by_lakestore(java, catalog, warehouse):
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], options=TRACKING)
    for dts, ids in WRITES:
        java.write(warehouse, "db.t", rows(dts, ids))
    expected = java_tracking(java, warehouse)
    assert lake_tracking(catalog) == expected
    assert [r["_ROW_ID"] for r in expected] == list(range(9))
    # time travel and filters keep each row's id
    assert lake_tracking(catalog, snapshot_id=1) == by_row_id(java.read(warehouse, "db.t$row_tracking", options={"scan.snapshot-id": "1"}))
    filtered = lake_tracking(catalog, filter=lakestore.col("dt") == "a")
    assert filtered == [r for r in expected if r["dt"] == "a"]


def test_lakestore_assigns_the_row_ids_java_assigns(java, catalog, warehouse, tmp_path):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=TRACKING)
    for dts, ids in WRITES:
        table.write_arrow(rows(dts, ids))
    other = tmp_path / "java-wh"
    java.create_table(other, "db.t", SCHEMA, partition_keys=["dt"], options=TRACKING)
    for dts, ids in WRITES:
        java.write(other, "db.t", rows(dts, ids))
    # the same writes give the same row ids and sequence numbers, whoever commits them
    assert java_tracking(java, warehouse) == java_tracking(java, other) == lake_tracking(catalog)
    assert [s["id"] for s in java.snapshots(warehouse, "db.t")] == [1, 2, 3]
    assert (
        json.loads(java.snapshot_json(warehouse, "db.t", 3))["nextRowId"]
        == json.loads(java.snapshot_json(other, "db.t", 3))["nextRowId"]
        == 9
    )


def test_engines_interleaved_continue_each_others_row_ids(java, catalog, warehouse):
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], options=TRACKING)
    java.write(warehouse, "db.t", rows(["x", "y"], [1, 2]))
    table = catalog.get_table("db.t")
    table.write_arrow(rows(["y", "z"], [3, 4]))
    java.write(warehouse, "db.t", rows(["x"], [5]))
    table.write_arrow(rows(["x"], [6]))
    expected = java_tracking(java, warehouse)
    assert [r["_ROW_ID"] for r in expected] == list(range(6))
    assert [r["_SEQUENCE_NUMBER"] for r in sorted(expected, key=lambda r: r["id"])] == [1, 1, 2, 2, 3, 4]
    assert lake_tracking(catalog) == expected
    table.compact(full=True)  # rows keep their ids (test_java_row_tracking_compaction.py)
    assert lake_tracking(catalog) == java_tracking(java, warehouse) == expected


def _java_data_evolution(java, warehouse: Path) -> None:
    """Base rows in two commits, then newer files holding some columns of them."""
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], options=EVOLUTION)
    java.write(warehouse, "db.t", rows(["x", "x", "x"], [1, 2, 3]))  # row ids 0..2
    java.write(warehouse, "db.t", rows(["y", "y"], [4, 5]))  # row ids 3..4
    java.write(warehouse, "db.t", pa.table({"dt": ["x"] * 3, "b": [100, 200, 300]}), write_columns=["dt", "b"], first_row_id=0)
    java.write(warehouse, "db.t", pa.table({"dt": ["x"] * 3, "a": ["P", None, "R"]}), write_columns=["dt", "a"], first_row_id=0)
    java.write(warehouse, "db.t", pa.table({"dt": ["y"] * 2, "b": [400, 500]}), write_columns=["dt", "b"], first_row_id=3)
    java.write(warehouse, "db.t", pa.table({"dt": ["x"] * 3, "b": [111, 222, 333]}), write_columns=["dt", "b"], first_row_id=0)


def test_java_data_evolution_table_read_by_lakestore(java, catalog, warehouse):
    _java_data_evolution(java, warehouse)
    expected = java_tracking(java, warehouse)
    assert [(r["a"], r["b"], r["_SEQUENCE_NUMBER"]) for r in expected] == [
        ("P", 111, 6),
        (None, 222, 6),
        ("R", 333, 6),
        ("a4", 400, 5),
        ("a5", 500, 5),
    ]
    assert lake_tracking(catalog) == expected
    table = catalog.get_table("db.t")
    # projections and filters on merged columns see the newest values, as Java's reads
    assert sorted(table.to_arrow(columns=["b"]).column("b").to_pylist()) == sorted(
        java.read(warehouse, "db.t", projection=["b"]).column("b").to_pylist()
    )
    assert table.to_arrow(columns=["id"], filter=lakestore.col("b") > 300).column("id").to_pylist() == [3, 4, 5]
    assert lake_tracking(catalog, snapshot_id=4) == by_row_id(java.read(warehouse, "db.t$row_tracking", options={"scan.snapshot-id": "4"}))
    with pytest.raises(UnsupportedTableError, match="data-evolution.enabled"):
        table.compact(full=True)


def test_lakestore_data_evolution_rows_updated_by_java(java, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=EVOLUTION)
    table.write_arrow(rows(["x", "x"], [1, 2]))
    java.write(warehouse, "db.t", pa.table({"dt": ["x"] * 2, "a": ["new1", "new2"]}), write_columns=["dt", "a"], first_row_id=0)
    table.write_arrow(rows(["x"], [3]))  # full rows after the partial file: row id 2
    expected = java_tracking(java, warehouse)
    assert [(r["id"], r["a"], r["_ROW_ID"]) for r in expected] == [(1, "new1", 0), (2, "new2", 1), (3, "a3", 2)]
    assert lake_tracking(catalog) == expected


def _pypaimon_update(warehouse: Path, identifier: str, column: str, updates: list[dict]) -> None:
    """pypaimon 2.1's partial-column update by row id (its data-evolution writer)."""
    script = (
        "import json, sys\n"
        "import pyarrow as pa\n"
        "from pypaimon import CatalogFactory\n"
        "wh, ident, column, updates = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])\n"
        "table = CatalogFactory.create({'warehouse': wh}).get_table(ident)\n"
        "data = pa.Table.from_pylist(updates)\n"
        "builder = table.new_batch_write_builder()\n"
        "messages = builder.new_update().with_update_type([column]).update_by_arrow_with_row_id(data)\n"
        "builder.new_commit().commit(messages)\n"
    )
    subprocess.run([str(oracle_python()), "-c", script, str(warehouse), identifier, column, json.dumps(updates)], check=True, timeout=600)


@pytest.mark.skipif(not oracle_available(), reason="pypaimon oracle venv (.venv-oracle) is missing")
def test_pypaimon_updates_columns_of_lakestore_rows(java, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, options=EVOLUTION)
    table.write_arrow(rows(["x", "x", "x"], [1, 2, 3]))
    table.write_arrow(rows(["y", "y"], [4, 5]))
    _pypaimon_update(warehouse, "db.t", "b", [{"_ROW_ID": 1, "b": 2000}, {"_ROW_ID": 4, "b": 5000}])
    got = lake_tracking(catalog)
    assert [(r["id"], r["b"], r["_ROW_ID"]) for r in got] == [(1, 10, 0), (2, 2000, 1), (3, 30, 2), (4, 40, 3), (5, 5000, 4)]
    assert got == java_tracking(java, warehouse)
    pypaimon = oracle_read(warehouse / "db.db" / "t")
    assert sorted(pypaimon.select(["id", "b"]).to_pylist(), key=lambda r: r["id"]) == [{"id": r["id"], "b": r["b"]} for r in got]


@pytest.mark.skipif(not oracle_available(), reason="pypaimon oracle venv (.venv-oracle) is missing")
def test_pypaimon_reads_lakestore_row_tracking_tables(catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=TRACKING)
    for dts, ids in WRITES:
        table.write_arrow(rows(dts, ids))
    pypaimon = oracle_read(warehouse / "db.db" / "t")
    assert sorted(pypaimon.to_pylist(), key=lambda r: r["id"]) == sorted(table.to_arrow().to_pylist(), key=lambda r: r["id"])


def test_lakestore_column_updates_read_by_java_and_pypaimon(java, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=EVOLUTION)
    table.write_arrow(rows(["x", "x", "x", "y"], [1, 2, 3, 4]))
    table.write_arrow(rows(["y"], [5]))
    table.update_columns(pa.table({"_ROW_ID": [4, 1, 3], "b": [500, 200, 400]}))
    java.write(warehouse, "db.t", pa.table({"dt": ["x"] * 3, "a": ["J1", "J2", "J3"]}), write_columns=["dt", "a"], first_row_id=0)
    table.update_columns(pa.table({"_ROW_ID": [2], "a": ["L3"], "b": [300]}))
    expected = java_tracking(java, warehouse)
    assert [(r["id"], r["a"], r["b"], r["_SEQUENCE_NUMBER"]) for r in expected] == [
        (1, "J1", 10, 5),
        (2, "J2", 200, 5),
        (3, "L3", 300, 5),
        (4, "a4", 400, 3),
        (5, "a5", 500, 3),
    ]
    assert lake_tracking(catalog) == expected
    if oracle_available():
        pypaimon = oracle_read(warehouse / "db.db" / "t")
        assert sorted(pypaimon.to_pylist(), key=lambda r: r["id"]) == [{k: r[k] for k in SCHEMA.names} for r in expected]


@pytest.mark.skipif(not oracle_available(), reason="pypaimon oracle venv (.venv-oracle) is missing")
def test_pypaimon_row_tracking_table_read_by_lakestore(java, catalog, warehouse):
    # pypaimon 2.1 numbers a commit's partitions in the order it met them (b, a, c), where Paimon
    # Java takes its HashMap's order (b, c, a): the ids are in the files, so every reader agrees
    for dts, ids in WRITES[:2]:
        oracle_write(warehouse, "db.t", rows(dts, ids), partition_keys=["dt"], options=TRACKING)
    expected = java_tracking(java, warehouse)
    assert [r["dt"] for r in expected][:4] == ["b", "b", "a", "c"]
    assert lake_tracking(catalog) == expected
    catalog.get_table("db.t").write_arrow(rows(["a"], [9]))
    assert lake_tracking(catalog) == java_tracking(java, warehouse)
    assert java_tracking(java, warehouse)[-1]["_ROW_ID"] == 8


def test_lakestore_tables_read_by_paimon_2_0_and_1_4(java_any, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=EVOLUTION)
    for dts, ids in WRITES:
        table.write_arrow(rows(dts, ids))
    table.update_columns(pa.table({"_ROW_ID": [0, 8], "a": ["first", "last"]}))
    assert java_tracking(java_any, warehouse) == lake_tracking(catalog)


def test_java_compacted_row_tracking_table_read_by_lakestore(java, catalog, warehouse):
    # the oracle compacts as Paimon's Flink/Spark compactors: the new file has no _FIRST_ROW_ID
    # and keeps every row's _ROW_ID and _SEQUENCE_NUMBER as columns of its own (_WRITE_COLS)
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], options=TRACKING)
    for dts, ids in WRITES:
        java.write(warehouse, "db.t", rows(dts, ids))
    before = java_tracking(java, warehouse)
    java.compact(warehouse, "db.t")
    assert java.snapshots(warehouse, "db.t")[-1]["commit_kind"] == "COMPACT"
    table = catalog.get_table("db.t")
    compacted = [f for split in table.scan().plan() for f in split.files if f.file_source == 1]
    assert compacted and all(f.first_row_id is None and "_ROW_ID" in (f.write_cols or ()) for f in compacted)
    assert java_tracking(java, warehouse) == before
    assert lake_tracking(catalog) == before
    table.write_arrow(rows(["a"], [10]))  # continues from nextRowId
    assert lake_tracking(catalog) == java_tracking(java, warehouse)
    assert lake_tracking(catalog)[-1]["_ROW_ID"] == 9


@pytest.mark.parametrize("options", [TRACKING, EVOLUTION], ids=["row-tracking", "data-evolution"])
def test_several_files_in_one_commit_read_by_java(java, catalog, warehouse, options):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options={**options, "write-buffer-size": "1 kb"})
    data = rows(["x"] * 200 + ["y"] * 100, list(range(300)))
    table.write_arrow(data.to_batches(max_chunksize=50))
    assert len([f for split in table.scan().plan() for f in split.files]) > 2
    assert lake_tracking(catalog) == java_tracking(java, warehouse)
