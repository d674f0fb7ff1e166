"""Nested columns across engines: lakestore writes and pypaimon 2.1 (Python and Rust readers)
and Paimon Java 2.0.0 read; they (pypaimon's Python and Rust writers, Java) write and lakestore
reads; compactions by either side."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from tests._support import sort_rows
from tests.oracle.driver import oracle_available, oracle_read, oracle_write
from tests.oracle.java_driver import java_oracle

pytestmark = pytest.mark.oracle

ROW = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("arr", pa.list_(pa.int32())),
        ("strs", pa.list_(pa.string())),
        ("m", pa.map_(pa.string(), pa.int64())),
        ("r", ROW),
        ("rows", pa.list_(ROW)),
    ]
)


def batch(ids: list[int], salt: int = 0) -> pa.Table:
    """Nulls at every level: null arrays/maps/rows, null elements, null map values, null row
    fields, empty arrays and maps. (No ROW with every field null: Paimon Java 0.9 reads one back
    as a null ROW.)"""
    shapes = [
        ([1 + salt, None], ["a", None], [("x", 1 + salt), ("y", None)], {"a": 1, "b": None}, [{"a": 1, "b": "x"}, None]),
        (None, [], None, None, None),
        ([], None, [], {"a": None, "b": f"s{salt}"}, []),
        ([3, 4, 5], ["b", "c"], [("z", 3)], {"a": 2, "b": "t"}, [{"a": None, "b": "y"}]),
    ]
    rows = [shapes[(i + salt) % len(shapes)] for i in ids]
    columns = [pa.array(ids, pa.int64()), *(pa.array([r[c] for r in rows], SCHEMA.field(c + 1).type) for c in range(5))]
    return pa.Table.from_arrays(columns, schema=SCHEMA)


def same(got: pa.Table, expected: pa.Table) -> None:
    assert sort_rows(got.select(expected.column_names), ["id"]) == sort_rows(expected, ["id"])


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db", exist_ok=True)
    return c


@pytest.fixture
def oracle():
    if not oracle_available():
        pytest.skip("pypaimon oracle environment missing")


@pytest.mark.parametrize("primary_keys", [["id"], []], ids=["pk", "append"])
def test_lakestore_writes_pypaimon_and_rust_read(catalog, oracle, primary_keys):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=primary_keys, options={"bucket": "2"} if primary_keys else {})
    table.write_arrow(batch([1, 2, 3, 4]))
    if primary_keys:
        table.write_arrow(batch([2, 3], salt=1))
        table.compact(full=True)
        table.write_arrow(batch([4], salt=2))
    expected = table.to_arrow()
    assert expected.num_rows == 4
    same(oracle_read(table.path), expected)
    same(oracle_read(table.path, native=True), expected)


@pytest.mark.parametrize("native", [False, True], ids=["python", "rust"])
def test_pypaimon_writes_lakestore_reads(catalog, oracle, tmp_path, native):
    warehouse = tmp_path / "wh"
    first, second = batch([1, 2, 3, 4]), batch([3, 4], salt=1)
    info = oracle_write(warehouse, "db.t", first, primary_keys=["id"], options={"bucket": "1"}, native=native)
    assert info["native_write_used"] is native
    oracle_write(warehouse, "db.t", second, primary_keys=["id"], options={"bucket": "1"}, native=native)
    table = catalog.get_table("db.t")
    assert table.schema.highest_field_id == 9  # ids 0-9: 6 columns, a and b of r, a and b of the ROW in rows
    expected = pa.concat_tables([first.slice(0, 2), second])
    same(table.to_arrow(), expected)
    table.write_arrow(batch([1], salt=3))
    table.compact(full=True)
    same(oracle_read(table.path), pa.concat_tables([batch([1], salt=3), first.slice(1, 1), second]))


def test_java_and_lakestore_share_a_table_with_nested_columns(catalog):
    java = java_oracle()
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    warehouse = catalog.warehouse
    table.write_arrow(batch([1, 2, 3, 4]))
    java.write(warehouse, "db.t", batch([2, 3], salt=1))
    expected = pa.concat_tables([batch([1, 4]), batch([2, 3], salt=1)])
    same(table.to_arrow(), expected)
    same(java.read(warehouse, "db.t"), expected)
    java.compact(warehouse, "db.t")  # Java rewrites lakestore's files
    same(table.to_arrow(), expected)
    table.write_arrow(batch([4, 5], salt=2))
    table.compact(full=True)  # lakestore rewrites Java's files
    expected = pa.concat_tables([batch([1]), batch([2, 3], salt=1), batch([4, 5], salt=2)])
    same(java.read(warehouse, "db.t"), expected)
    same(table.to_arrow(), expected)


def test_nested_field_ids_match_pypaimon(catalog, oracle, tmp_path):
    inner = pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.list_(pa.struct([("z", pa.int64())])))])
    schema = pa.schema(
        [("id", pa.int64()), ("r", pa.struct([("a", pa.int32()), ("s", inner), ("b", pa.string())])), ("m", pa.map_(pa.string(), inner))]
    )
    oracle_write(tmp_path / "wh", "db.theirs", schema.empty_table(), primary_keys=["id"], options={"bucket": "1"})
    ours = catalog.create_table("db.ours", schema=schema, primary_keys=["id"], options={"bucket": "1"}).schema
    theirs = catalog.get_table("db.theirs").schema
    assert [f.to_json() for f in ours.fields] == [f.to_json() for f in theirs.fields]
    assert ours.highest_field_id == theirs.highest_field_id == 11


@pytest.mark.parametrize("version", ["2.0.0", "1.4.2"])
def test_a_row_with_every_field_null_both_ways(catalog, version):
    """Paimon 2.0.0 and 1.4.2 keep a ROW whose fields are all null apart from a null ROW (0.9 read
    it back as a null ROW)."""
    java = java_oracle(version)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("r", ROW), ("rows", pa.list_(ROW))])
    data = pa.Table.from_pylist(
        [{"id": 1, "r": {"a": None, "b": None}, "rows": [{"a": None, "b": None}, None]}, {"id": 2, "r": None, "rows": None}], schema=schema
    )
    catalog.create_table("db.ours", schema=schema, primary_keys=["id"], options={"bucket": "1"}).write_arrow(data)
    java.create_table(catalog.warehouse, "db.theirs", schema, primary_keys=["id"], options={"bucket": "1"})
    java.write(catalog.warehouse, "db.theirs", data)
    same(java.read(catalog.warehouse, "db.ours"), data)
    same(catalog.get_table("db.theirs").to_arrow(), data)
