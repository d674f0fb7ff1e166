"""Nested columns through the Iceberg metadata: lakestore's data files carry Paimon's Parquet
field ids on nested children (ROW fields, ARRAY elements, MAP keys and values), the ids the
Iceberg schema names, so pyiceberg, DuckDB and Polars read ROW/ARRAY/MAP columns (without them
pyiceberg refused primary-key files and the readers returned null struct fields); the ids equal
the ones Paimon 2.0 Java writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from tests.iceberg.readers import all_readers, duckdb_connection, latest_metadata
from tests.oracle.java_driver import java_oracle

POINT = pa.struct([pa.field("a", pa.string()), pa.field("b", pa.list_(pa.int32()))])
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("f", POINT),
        pa.field("m", pa.map_(pa.string(), pa.int64())),
        pa.field("l", pa.list_(POINT)),
    ]
)
DATA = pa.table(
    {
        "id": [1, 2, 3],
        "f": [{"a": "x", "b": [1, 2]}, None, {"a": None, "b": []}],
        "m": [[("k", 1), ("j", 2)], None, []],
        # (pyiceberg 0.12 reads a null list of structs as an empty list; DuckDB and Polars read null)
        "l": [[{"a": "q", "b": [3]}], [], [{"a": None, "b": None}]],
    },
    schema=SCHEMA,
)


@pytest.fixture(scope="module")
def con() -> Any:
    return duckdb_connection()


def _field_ids(field: pa.Field) -> list[Any]:
    """The Parquet field ids of a column and its nested children, depth first."""
    ids: list[Any] = [(field.metadata or {}).get(b"PARQUET:field_id")]
    t = field.type
    if pa.types.is_struct(t):
        children = [t.field(i) for i in range(t.num_fields)]
    elif pa.types.is_map(t):
        children = [t.key_field, t.item_field]
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        children = [t.value_field]
    else:
        children = []
    for child in children:
        ids += _field_ids(child)
    return ids


def _file_ids(table_dir: Path) -> list[Any]:
    (path,) = sorted(table_dir.rglob("data-*.parquet"))[:1]
    schema = pq.ParquetFile(path).schema_arrow
    return [i for name in SCHEMA.names for i in _field_ids(schema.field(name))]


@pytest.mark.parametrize("primary_key", [False, True])
def test_iceberg_readers_read_nested_columns(tmp_path: Path, con: Any, primary_key: bool):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    options = {"metadata.iceberg.storage": "table-location", **({"bucket": "1"} if primary_key else {})}
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"] if primary_key else [], options=options)
    table.write_arrow(DATA)
    metadata = latest_metadata(Path(table.path) / "metadata")
    want = DATA.sort_by("id").to_pylist()
    assert table.to_arrow().sort_by("id").to_pylist() == want
    for reader, got in all_readers(con, metadata).items():
        assert got.select(SCHEMA.names).sort_by("id").to_pylist() == want, reader
    ids = _file_ids(Path(table.path))
    assert None not in ids and len(set(ids)) == len(ids)


@pytest.mark.oracle
def test_nested_field_ids_equal_paimon_javas(tmp_path: Path):
    java = java_oracle()
    ours = lakestore.Catalog(str(tmp_path / "ours"))
    ours.create_database("db")
    for primary_key in (False, True):
        name = f"db.t{int(primary_key)}"
        keys = ["id"] if primary_key else []
        options = {"bucket": "1"} if primary_key else {}
        java.create_table(tmp_path / "java", name, SCHEMA, primary_keys=keys, options=options)
        java.write(tmp_path / "java", name, DATA)
        ours.create_table(name, schema=SCHEMA, primary_keys=keys, options=options).write_arrow(DATA)
        java_ids = _file_ids(tmp_path / "java" / "db.db" / f"t{int(primary_key)}")
        assert None not in java_ids
        assert _file_ids(tmp_path / "ours" / "db.db" / f"t{int(primary_key)}") == java_ids, name
