"""Avro data files both ways against Paimon Java 2.0.0: Java writes Avro primary-key and append
tables, lakestore reads them, writes more Avro files and compacts; Java reads lakestore's result.
Value statistics equal Java's for the same rows; ``file.format.per.level`` mixes Avro level-0
files with parquet above. TIMESTAMP(7..9) has no Avro type (Java and lakestore refuse it)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tests.compact._tables import live_files
from tests.interop.conftest import same_rows
from tests.interop.test_java_orc import data_files, live_stats, orc_safe_types, rows
from tests.oracle.test_oracle_driver import ALL_TYPES

pytestmark = pytest.mark.oracle
SCHEMA = pa.schema([f for f in ALL_TYPES if f.name != "ts9"])
AVRO = {"file.format": "avro"}


def avro_rows() -> pa.Table:
    return orc_safe_types().select(SCHEMA.names)


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_java_writes_avro_lakestore_reads_writes_compacts(java, catalog, warehouse, primary_keys):
    options = {**AVRO, "bucket": "1"} if primary_keys else dict(AVRO)
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=primary_keys, options=options)
    data = avro_rows()
    java.write(warehouse, "db.t", data)
    table = catalog.get_table("db.t")
    assert all(p.endswith(".avro") for p in data_files(table.path))
    assert rows(table.to_arrow(), SCHEMA.names) == rows(data, SCHEMA.names)
    table.write_arrow(data.slice(1, 2))
    table.compact(full=True)
    expected = data if primary_keys else pa.concat_tables([data, data.slice(1, 2)])
    assert rows(catalog.get_table("db.t").to_arrow(), SCHEMA.names) == rows(expected, SCHEMA.names)
    assert rows(java.read(warehouse, "db.t"), SCHEMA.names) == rows(expected, SCHEMA.names)


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_lakestore_writes_avro_java_reads_and_continues(java, catalog, warehouse, primary_keys):
    options = {**AVRO, "bucket": "1"} if primary_keys else dict(AVRO)
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=primary_keys, options=options)
    data = avro_rows()
    table.write_arrow(data)
    assert all(p.endswith(".avro") for p in data_files(table.path))
    assert rows(java.read(warehouse, "db.t"), SCHEMA.names) == rows(data, SCHEMA.names)
    java.write(warehouse, "db.t", data.slice(0, 1))
    java.compact(warehouse, "db.t")
    expected = data if primary_keys else pa.concat_tables([data, data.slice(0, 1)])
    assert rows(catalog.get_table("db.t").to_arrow(), SCHEMA.names) == rows(expected, SCHEMA.names)


@pytest.mark.parametrize("mode", ["full", "truncate(16)"])
def test_avro_value_stats_equal_javas(java, catalog, warehouse, mode):
    data = avro_rows()
    data = data.set_column(data.schema.get_field_index("s"), "s", pa.array(["z" * 40, None, "a" * 30], pa.string()))
    data = data.set_column(data.schema.get_field_index("f64"), "f64", pa.array([1.5, None, float("nan")], pa.float64()))
    options = {**AVRO, "metadata.stats-mode": mode}
    java.create_table(warehouse, "db.j", SCHEMA, options=options)
    java.write(warehouse, "db.j", data)
    mine = catalog.create_table("db.l", schema=SCHEMA, options=options)
    mine.write_arrow(data)
    assert live_stats(mine.path) == live_stats(str(Path(warehouse) / "db.db" / "j"))


def test_avro_level0_parquet_above_java_reads(java, catalog, warehouse):
    """file.format.per.level = 0:avro: level-0 files in Avro, compacted levels in parquet."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {"bucket": "1", "file.format": "parquet", "file.format.per.level": "0:avro"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    java.write(warehouse, "db.t", pa.table({"id": [2, 3], "v": ["B", "c"]}, schema=schema))
    assert sorted(Path(p).suffix for p in data_files(table.path)) == [".avro", ".avro"]
    expected = pa.table({"id": [1, 2, 3], "v": ["a", "B", "c"]}, schema=schema)
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])
    catalog.get_table("db.t").compact(full=True)
    assert [(f.level, Path(f.file_name).suffix) for f in live_files(catalog.get_table("db.t"))] == [(5, ".parquet")]
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
