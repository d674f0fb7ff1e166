"""Nested Paimon types (ARRAY, MAP, MULTISET, ROW): schema JSON as Paimon writes it, field ids,
Arrow mapping, what tables refuse, and schema changes."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from lakestore.errors import SchemaChangeError, SchemaMismatchError
from lakestore.format.types import DataField, DataType, from_arrow, parse_type
from lakestore.meta.schema import TableSchema, new_schema
from lakestore.meta.schema_change import AddColumn, RenameColumn, UpdateColumnType, apply_changes

ROW = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])

# A field list as Paimon Java 0.9 serializes it (nullability in the type name, no "nullable" key).
JAVA_FIELDS = [
    {"id": 0, "name": "id", "type": "BIGINT NOT NULL"},
    {"id": 1, "name": "arr", "type": {"type": "ARRAY NOT NULL", "element": "INT NOT NULL"}},
    {"id": 2, "name": "m", "type": {"type": "MAP", "key": "STRING NOT NULL", "value": "BIGINT"}},
    {"id": 3, "name": "ms", "type": {"type": "MULTISET", "element": "STRING"}},
    {
        "id": 4,
        "name": "r",
        "type": {
            "type": "ROW",
            "fields": [
                {"id": 5, "name": "a", "type": "INT", "description": "first"},
                {
                    "id": 6,
                    "name": "rows",
                    "type": {"type": "ARRAY", "element": {"type": "ROW NOT NULL", "fields": [{"id": 7, "name": "x", "type": "DOUBLE"}]}},
                },
            ],
        },
    },
]


def _schema_json(fields: list[dict], highest: int) -> str:
    doc = {"version": 3, "id": 0, "fields": fields, "highestFieldId": highest, "partitionKeys": [], "primaryKeys": ["id"], "options": {}}
    return json.dumps(doc)


def test_java_schema_json_round_trips_exactly():
    schema = TableSchema.from_json(_schema_json(JAVA_FIELDS, 7), source="schema-0")
    assert [f.to_json() for f in schema.fields] == JAVA_FIELDS
    arr = schema.field("arr").type
    assert arr == DataType.array(DataType("INT", False), nullable=False)
    r = schema.field("r").type
    assert [n.id for n in r.nested_fields()] == [5, 6, 7]
    assert r.fields[0].description == "first"
    assert str(r) == "ROW<a INT, rows ARRAY<ROW<x DOUBLE> NOT NULL>>"
    assert schema.field("ms").type.to_arrow() == pa.map_(
        pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int32(), nullable=False)
    )


def test_pypaimon_nullable_key_is_read():
    """pypaimon 2.x also writes ``"nullable"`` into nested type objects."""
    assert parse_type({"type": "ARRAY", "element": "INT", "nullable": False}).nullable is False
    assert parse_type({"type": "MAP NOT NULL", "key": "INT NOT NULL", "value": "INT", "nullable": True}).nullable is True


@pytest.mark.parametrize(
    "fields",
    [
        [
            {"id": 0, "name": "id", "type": "BIGINT"},
            {"id": 1, "name": "r", "type": {"type": "ROW", "fields": [{"id": 1, "name": "a", "type": "INT"}]}},
        ],
        [{"id": 0, "name": "id", "type": "BIGINT"}, {"id": 1, "name": "r", "type": {"type": "ARRAY"}}],
        [
            {"id": 0, "name": "id", "type": "BIGINT"},
            {"id": 1, "name": "r", "type": {"type": "ROW", "fields": [{"id": "2", "name": "a", "type": "INT"}]}},
        ],
    ],
    ids=["duplicate-nested-id", "array-without-element", "string-id"],
)
def test_malformed_nested_types_are_corrupt_metadata(fields):
    with pytest.raises(lakestore.CorruptMetadataError):
        TableSchema.from_json(_schema_json(fields, 3), source="schema-0")


def test_highest_field_id_must_cover_nested_ids():
    with pytest.raises(lakestore.CorruptMetadataError, match="highestFieldId"):
        TableSchema.from_json(_schema_json(JAVA_FIELDS, 4), source="schema-0")


def test_nested_field_ids_follow_paimon_numbering():
    """A column takes the next id, then its nested ROW fields do, each field after its own type
    (Paimon's Schema.Builder.column + ReassignFieldId)."""
    inner = pa.struct([pa.field("x", pa.int32())])
    arrow = pa.schema(
        [
            ("id", pa.int64()),
            ("r", pa.struct([pa.field("a", pa.int32()), pa.field("s", inner), pa.field("b", pa.string())])),
            ("l", pa.list_(ROW)),
            ("v", pa.string()),
        ]
    )
    schema = new_schema(arrow, primary_keys=["id"])
    ids = {f.name: (f.id, [(n.name, n.id) for n in f.type.nested_fields()]) for f in schema.fields}
    assert ids == {
        "id": (0, []),
        "r": (1, [("a", 2), ("s", 4), ("x", 3), ("b", 5)]),
        "l": (6, [("a", 7), ("b", 8)]),
        "v": (9, []),
    }
    assert schema.highest_field_id == 9
    assert schema.arrow_schema().field("l").type == pa.list_(ROW)


def test_arrow_round_trip_keeps_structure_and_nullability():
    arrow = pa.schema(
        [
            pa.field("a", pa.list_(pa.field("item", pa.string(), nullable=False)), nullable=False),
            pa.field("m", pa.map_(pa.string(), pa.list_(ROW))),
            pa.field("r", pa.struct([pa.field("a", pa.int32(), nullable=False), pa.field("ts", pa.timestamp("us"))])),
        ]
    )
    schema = new_schema(arrow)
    assert schema.arrow_schema() == arrow
    assert from_arrow(pa.large_list(pa.int64())) == DataType.array(DataType("BIGINT"))


@pytest.mark.parametrize(
    "arrow", [pa.struct([]), pa.struct([("a", pa.int32()), ("a", pa.string())]), pa.list_(pa.uint64()), pa.map_(pa.string(), pa.float16())]
)
def test_arrow_types_without_a_paimon_equivalent_are_refused_by_column(tmp_path, arrow):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    with pytest.raises(lakestore.UnsupportedTypeError, match="column 'v'"):
        catalog.create_table("db.t", schema=pa.schema([("id", pa.int64()), ("v", arrow)]))
    assert not catalog.table_exists("db.t")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"primary_keys": ["arr"]}, "primary key 'arr'"),
        ({"partition_keys": ["r"]}, "partition key 'r'"),
        ({"options": {"bucket": "2", "bucket-key": "m"}}, "bucket-key 'm'"),
        ({"primary_keys": ["id"], "options": {"sequence.field": "r"}}, "sequence.field 'r'"),
    ],
)
def test_nested_key_columns_are_refused_by_name(tmp_path, kwargs, name):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    arrow = pa.schema([("id", pa.int64()), ("arr", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int32())), ("r", ROW)])
    with pytest.raises((SchemaMismatchError, lakestore.OptionError), match=name):
        catalog.create_table("db.t", schema=arrow, **kwargs)
    assert not catalog.table_exists("db.t")


def test_writes_refuse_a_different_nested_structure(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=pa.schema([("id", pa.int64()), ("r", ROW)]))
    other = pa.struct([pa.field("a", pa.int32()), pa.field("c", pa.string())])
    with pytest.raises(SchemaMismatchError, match="'r'"):
        table.write_arrow(pa.table({"id": [1], "r": pa.array([{"a": 1, "c": "x"}], other)}))
    assert table.latest_snapshot() is None


def test_schema_changes_with_nested_columns():
    schema = new_schema(pa.schema([("id", pa.int64()), ("r", ROW)]), primary_keys=["id"])
    added = apply_changes(schema, [AddColumn("tags", pa.list_(pa.struct([("k", pa.string()), ("n", pa.int32())])))])
    tags = added.field("tags")
    assert tags.id == 4 and [n.id for n in tags.type.nested_fields()] == [5, 6]
    assert added.highest_field_id == 6
    renamed = apply_changes(added, [RenameColumn("r", "row")])
    assert renamed.field("row").id == schema.field("r").id
    relaxed = apply_changes(
        renamed, [UpdateColumnType("row", DataType.row([DataField(0, "a", DataType("INT")), DataField(0, "b", parse_type("STRING"))]))]
    )
    assert relaxed.field("row").type == schema.field("r").type  # ids kept
    with pytest.raises(SchemaChangeError, match="nested column 'row'"):
        apply_changes(renamed, [UpdateColumnType("row", pa.struct([("a", pa.int64()), ("b", pa.string())]))])
    with pytest.raises(SchemaChangeError, match="nested column 'tags'"):
        apply_changes(renamed, [UpdateColumnType("tags", pa.list_(pa.struct([("k", pa.string())])))])


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("arr", "column 'arr' element is NOT NULL"),
        ("m", "column 'm' value element is NOT NULL"),
        ("r", "column 'r'.*field 'x'.*has nulls"),  # Arrow's struct cast checks (SchemaMismatchError)
    ],
)
def test_nulls_in_not_null_nested_parts_are_refused(tmp_path, column, message):
    """Arrow does not check child nullability; a null there would be written into a required
    parquet field."""
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    required_int = pa.list_(pa.field("item", pa.int32(), nullable=False))
    required_row = pa.struct([pa.field("x", pa.float64(), nullable=False)])
    strict = pa.schema(
        [
            ("id", pa.int64()),
            ("arr", required_int),
            ("m", pa.map_(pa.string(), required_int)),
            ("r", pa.struct([("a", pa.int32()), ("rows", pa.list_(required_row))])),
        ]
    )
    table = catalog.create_table("db.t", schema=strict, primary_keys=["id"])
    loose = {
        "arr": pa.list_(pa.int32()),
        "m": pa.map_(pa.string(), pa.list_(pa.int32())),
        "r": pa.struct([("a", pa.int32()), ("rows", pa.list_(pa.struct([("x", pa.float64())])))]),
    }
    good = {"arr": [[1]], "m": [[("k", [1])]], "r": [{"a": 1, "rows": [{"x": 1.0}]}]}
    bad = {"arr": [[1, None]], "m": [[("k", [None])]], "r": [{"a": 1, "rows": [{"x": None}]}]}
    data = {name: pa.array(bad[name] if name == column else good[name], loose[name]) for name in loose}
    with pytest.raises((lakestore.NullKeyError, SchemaMismatchError), match=message):
        table.write_arrow(pa.table({"id": [1], **data}))
    assert table.latest_snapshot() is None
    # Nulls above a NOT NULL part are fine.
    table.write_arrow(pa.table({"id": [1, 2], **{name: pa.array(good[name] + [None], loose[name]) for name in loose}}))
    assert table.to_arrow().sort_by("id")["r"].to_pylist() == [{"a": 1, "rows": [{"x": 1.0}]}, None]


def test_multiset_columns_store_element_counts_as_a_map(tmp_path):
    """Neither oracle reads MULTISET through Arrow; the layout follows Paimon's parquet schema
    converter (a map of element to INT NOT NULL count)."""
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=pa.schema([("id", pa.int64())]), primary_keys=["id"])
    path = tmp_path / "db.db" / "t" / "schema" / "schema-0"
    doc = json.loads(path.read_text())
    doc["fields"].append({"id": 1, "name": "ms", "type": {"type": "MULTISET", "element": "STRING"}})
    doc["highestFieldId"] = 1
    path.write_text(json.dumps(doc))
    table = catalog.get_table("db.t")
    table.write_arrow(pa.table({"id": [1, 2], "ms": pa.array([[("a", 2), ("b", 1)], None], pa.map_(pa.string(), pa.int64()))}))
    assert table.to_arrow().sort_by("id")["ms"].to_pylist() == [[("a", 2), ("b", 1)], None]
    (data_file,) = (tmp_path / "db.db" / "t").rglob("*.parquet")
    parquet = pq.ParquetFile(data_file).schema
    value = next(parquet.column(i) for i in range(len(parquet)) if parquet.column(i).path == "ms.key_value.value")
    assert value.max_definition_level == 2  # required count under the optional map and its entries
