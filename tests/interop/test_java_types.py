"""Every column type the Java oracle carries, both ways: Paimon Java (2.0.0 and 1.4.2) writes and
lakestore reads; lakestore writes and Java reads; then each engine continues the other's table.

TIMESTAMP(9) is checked on its own: Paimon writes it to parquet as INT96 and so does lakestore
(tests/interop/test_java_timestamp_int96.py has the mixed-precision files)."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

from tests.oracle.java_driver import java_oracle
from tests.oracle.test_oracle_driver import ALL_TYPES, all_types

pytestmark = pytest.mark.oracle
LAKESTORE_CREATES = ALL_TYPES  # TIME included: time32[ms] becomes TIME(3)


def rows(table: pa.Table, names: list[str]) -> list[dict]:
    return sorted(table.select(names).to_pylist(), key=lambda r: r["id"])


def without(schema: pa.Schema, *names: str) -> list[str]:
    return [n for n in schema.names if n not in names]


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_java_writes_every_type_lakestore_reads(java_any, catalog, warehouse, primary_keys):
    java_any.create_table(warehouse, "db.t", ALL_TYPES, primary_keys=primary_keys, options={"bucket": "1"} if primary_keys else {})
    java_any.write(warehouse, "db.t", all_types())
    table = catalog.get_table("db.t")
    assert table.to_arrow().schema.names == ALL_TYPES.names
    assert rows(table.to_arrow(), ALL_TYPES.names) == rows(all_types(), ALL_TYPES.names)
    table.write_arrow(all_types().slice(1, 2))
    expected = all_types() if primary_keys else pa.concat_tables([all_types(), all_types().slice(1, 2)])
    names = without(ALL_TYPES, "ts9")  # test_java_reads_timestamp9_lakestore_wrote
    assert rows(java_any.read(warehouse, "db.t"), names) == rows(expected, names)


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_lakestore_writes_every_type_java_reads(java_any, catalog, warehouse, primary_keys):
    table = catalog.create_table(
        "db.t", schema=LAKESTORE_CREATES, primary_keys=primary_keys, options={"bucket": "1"} if primary_keys else {}
    )
    data = all_types().select(LAKESTORE_CREATES.names)
    table.write_arrow(data)
    names = without(LAKESTORE_CREATES, "ts9")
    assert rows(java_any.read(warehouse, "db.t"), names) == rows(data, names)
    java_any.write(warehouse, "db.t", data.slice(0, 1))
    expected = data if primary_keys else pa.concat_tables([data, data.slice(0, 1)])
    assert rows(catalog.get_table("db.t").to_arrow(), LAKESTORE_CREATES.names) == rows(expected, LAKESTORE_CREATES.names)
    if primary_keys:
        java_any.compact(warehouse, "db.t")
        assert rows(catalog.get_table("db.t").to_arrow(), names) == rows(expected, names)


@pytest.mark.parametrize("version", ["2.0.0", "1.4.2"])
def test_java_reads_timestamp9_lakestore_wrote(catalog, warehouse, version):
    java = java_oracle(version)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts9", pa.timestamp("ns"))])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    data = all_types().select(["id", "ts9"]).cast(schema)
    table.write_arrow(data)
    assert rows(java.read(warehouse, "db.t"), ["id", "ts9"]) == rows(data, ["id", "ts9"])
    java.write(warehouse, "db.t", data.slice(0, 1))
    java.compact(warehouse, "db.t")  # Java rewrites lakestore's file
    assert rows(catalog.get_table("db.t").to_arrow(), ["id", "ts9"]) == rows(data, ["id", "ts9"])


@pytest.mark.parametrize("unit", ["ms", "us"])
def test_lakestore_creates_a_time_column_java_reads(java, catalog, warehouse, unit):
    """Arrow time32[ms] / time64[us] become TIME(3) / TIME(6) (Paimon keeps milliseconds of the
    day for every precision); Java 2.0 reads lakestore's rows, writes its own, and lakestore reads
    both, before and after a Java compaction rewrites lakestore's file."""
    arrow_type = pa.time32("ms") if unit == "ms" else pa.time64("us")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("time", arrow_type)])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1"})
    assert str(table.schema.field("time").type) == ("TIME(3)" if unit == "ms" else "TIME(6)")
    data = all_types().select(["id", "time"]).cast(schema)
    table.write_arrow(data)
    read_as = pa.schema([schema.field("id"), ("time", pa.time32("ms"))])
    expected = data.cast(read_as)
    assert rows(java.read(warehouse, "db.t"), ["id", "time"]) == rows(expected, ["id", "time"])
    more = pa.table({"id": [100], "time": pa.array([datetime.time(12, 34, 56, 789000)], pa.time32("ms"))}, schema=read_as)
    java.write(warehouse, "db.t", more)
    both = pa.concat_tables([expected, more])
    assert rows(catalog.get_table("db.t").to_arrow(), ["id", "time"]) == rows(both, ["id", "time"])
    java.compact(warehouse, "db.t")
    assert rows(catalog.get_table("db.t").to_arrow(), ["id", "time"]) == rows(both, ["id", "time"])
    assert rows(java.read(warehouse, "db.t"), ["id", "time"]) == rows(both, ["id", "time"])
