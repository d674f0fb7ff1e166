"""Deletion-vector tables with Paimon Java 0.9, the reference: Java writes and lakestore reads
(level 0 invisible, vectors applied, no merge), lakestore writes and Java reads, and writers of
both engines interleaved on one table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
import tests.interop.test_java_merge_engines as scenario
from lakestore.read.deletion_vectors import read_index_files
from tests.compact._tables import live_files
from tests.interop.conftest import same_rows
from tests.oracle.java_driver import JavaOracle, java_oracle

pytestmark = pytest.mark.oracle

ENGINES = ["deduplicate", "partial-update", "aggregation"]  # Java refuses vectors with first-row
KEYS = scenario.KEYS


@pytest.fixture
def java() -> JavaOracle:
    return java_oracle()


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return tmp_path / "wh"


@pytest.fixture
def catalog(warehouse) -> lakestore.Catalog:
    c = lakestore.Catalog(str(warehouse))
    c.create_database("db", exist_ok=True)
    return c


def options(engine: str) -> dict[str, str]:
    return {**scenario.options(engine), "deletion-vectors.enabled": "true"}


def vector_count(table: lakestore.Table) -> int:
    return sum(len(f.ranges) for f in read_index_files(table.file_io, table.path, table.latest_snapshot()))


@pytest.mark.parametrize("engine", ENGINES)
def test_java_writes_lakestore_reads(java, catalog, warehouse, engine):
    java.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options(engine))
    for index in range(len(scenario.COMMITS)):
        java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows(engine, index)))
        expected = scenario.model(engine, index + 1)
        same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    table = catalog.get_table("db.t")
    assert vector_count(table) > 0
    assert all(s.raw_convertible for s in table.plan())
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    # time travel to a snapshot before the last vectors
    first = scenario.model(engine, 1)
    same_rows(catalog.get_table("db.t").to_arrow(snapshot_id=2), first, KEYS)


def test_level0_rows_stay_invisible_until_moved_up(java, catalog, warehouse):
    """Java's write-only writers leave level 0 for a compaction job: readers of both engines show
    the table without them."""
    java.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options("deduplicate"))
    java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", 0)))
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": "write-only", "value": "true"}])
    java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", 1)))
    table = catalog.get_table("db.t")
    assert any(f.level == 0 for f in live_files(table))
    expected = scenario.model("deduplicate", 1)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    same_rows(table.to_arrow(), expected, KEYS)
    java.alter(warehouse, "db.t", [{"op": "set_option", "key": "write-only", "value": "false"}])
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), scenario.model("deduplicate", 2), KEYS)


def test_projection_and_filter(java, catalog, warehouse):
    java.create_table(warehouse, "db.t", scenario.SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options("deduplicate"))
    for index in range(3):
        java.write(warehouse, "db.t", scenario.as_table(scenario.commit_rows("deduplicate", index)))
    expected = scenario.model("deduplicate", 3)
    got = catalog.get_table("db.t").to_arrow(columns=["id", "w"], filter=lakestore.col("dt") == "a")
    want = expected.filter(pa.compute.equal(expected["dt"], "a")).select(["id", "w"])
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == sorted(want.to_pylist(), key=lambda r: r["id"])


def test_append_table_reads_and_refuses_writes(java, catalog, warehouse):
    """Paimon 0.9 deletes rows of append tables only through Spark's DELETE/UPDATE: lakestore reads
    such tables (vectors applied) and refuses to write them."""
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
    java.create_table(warehouse, "db.a", schema, options={"bucket": "-1", "deletion-vectors.enabled": "true"})
    data = pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema)
    java.write(warehouse, "db.a", data)
    table = catalog.get_table("db.a")
    assert sorted(table.to_arrow().to_pylist(), key=lambda r: r["id"]) == data.to_pylist()
    with pytest.raises(lakestore.errors.UnsupportedTableError, match="deletion-vectors.enabled"):
        table.write_arrow(data)
