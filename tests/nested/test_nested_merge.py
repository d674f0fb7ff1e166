"""Primary-key tables carry nested values through upserts, merge engines and compaction; data
files use Paimon's parquet layout and keep no statistics for nested columns."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from lakestore.format.binary_row import decode_row
from tests.compact._tables import live_files

ROW = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
SCHEMA = pa.schema(
    [("id", pa.int64()), ("v", pa.int64()), ("tags", pa.list_(pa.string())), ("attrs", pa.map_(pa.string(), pa.int64())), ("r", ROW)]
)


def rows(ids, v, tags, attrs, r) -> pa.Table:
    return pa.table(
        [
            pa.array(ids, pa.int64()),
            pa.array(v, pa.int64()),
            pa.array(tags, SCHEMA.field("tags").type),
            pa.array(attrs, SCHEMA.field("attrs").type),
            pa.array(r, ROW),
        ],
        schema=SCHEMA,
    )


@pytest.fixture
def catalog(tmp_path) -> lakestore.Catalog:
    c = lakestore.Catalog(str(tmp_path))
    c.create_database("db")
    return c


FIRST = rows([1, 2, 3], [1, 2, 3], [["a"], None, []], [[("x", 1)], [], None], [{"a": 1, "b": "p"}, None, {"a": None, "b": None}])
SECOND = rows([2, 3, 4], [20, None, 40], [["b", None], None, ["c"]], [None, [("y", None)], [("z", 4)]], [{"a": 2, "b": None}, None, None])

EXPECTED = {
    "deduplicate": [
        (1, 1, ["a"], [("x", 1)], {"a": 1, "b": "p"}),
        (2, 20, ["b", None], None, {"a": 2, "b": None}),
        (3, None, None, [("y", None)], None),
        (4, 40, ["c"], [("z", 4)], None),
    ],
    "first-row": [
        (1, 1, ["a"], [("x", 1)], {"a": 1, "b": "p"}),
        (2, 2, None, [], None),
        (3, 3, [], None, {"a": None, "b": None}),
        (4, 40, ["c"], [("z", 4)], None),
    ],
    "partial-update": [  # a null never overwrites; a ROW of nulls is not null
        (1, 1, ["a"], [("x", 1)], {"a": 1, "b": "p"}),
        (2, 20, ["b", None], [], {"a": 2, "b": None}),
        (3, 3, [], [("y", None)], {"a": None, "b": None}),
        (4, 40, ["c"], [("z", 4)], None),
    ],
}


def as_tuples(table: pa.Table) -> list[tuple]:
    return [tuple(r.values()) for r in table.sort_by("id").to_pylist()]


@pytest.mark.parametrize("engine", sorted(EXPECTED))
def test_merge_engines_carry_nested_values_through_upserts_and_compaction(catalog, engine):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2", "merge-engine": engine})
    table.write_arrow(FIRST)
    table.write_arrow(SECOND)
    assert as_tuples(table.to_arrow()) == EXPECTED[engine]
    table.compact(full=True)
    assert as_tuples(table.to_arrow()) == EXPECTED[engine]
    if engine != "first-row":  # first-row's own commits keep level 0 empty: snapshot 1 reads nothing
        assert as_tuples(table.to_arrow(snapshot_id=1)) == as_tuples(FIRST)
    assert table.to_arrow(columns=["r", "id"]).schema == pa.schema([("r", ROW), pa.field("id", pa.int64(), nullable=False)])


def test_data_files_use_paimon_layout_and_no_nested_statistics(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(FIRST)
    table.write_arrow(SECOND)
    table.compact(full=True)  # rewrites both files into one with full statistics
    (meta,) = live_files(table)
    path = next(Path(table.path).rglob(meta.file_name))
    parquet = pq.ParquetFile(path).schema
    paths = {parquet.column(i).path for i in range(len(parquet))}
    assert {"tags.list.element", "attrs.key_value.key", "attrs.key_value.value", "r.a", "r.b"} <= paths
    # Like Paimon Java 2.0: nested columns have no statistics, so the dense store
    # (metadata.stats-dense-store, default true) lists only the others.
    stats = meta.value_stats
    names = SCHEMA.names[:2]
    assert meta.value_stats_cols == tuple(names)
    assert stats.null_counts == (0, 1)
    types = table.schema.types_of(names)
    assert decode_row(stats.min_values, types) == (1, 1)
    assert decode_row(stats.max_values, types) == (4, 40)
    # without the dense store every column is present, the nested ones null
    sparse = catalog.create_table(
        "db.sparse", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1", "metadata.stats-dense-store": "false"}
    )
    sparse.write_arrow(FIRST)
    sparse.write_arrow(SECOND)
    sparse.compact(full=True)
    (meta,) = live_files(sparse)
    assert meta.value_stats_cols is None
    assert meta.value_stats.null_counts == (0, 1, None, None, None)
    all_types = sparse.schema.types_of(SCHEMA.names)
    assert decode_row(meta.value_stats.min_values, all_types) == (1, 1, None, None, None)
    assert decode_row(meta.value_stats.max_values, all_types) == (4, 40, None, None, None)


def test_nested_filters_on_nullness(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(FIRST)
    table.compact(full=True)
    assert table.to_arrow(filter=lakestore.col("tags").is_null())["id"].to_pylist() == [2]
    assert sorted(table.to_arrow(filter=lakestore.col("r").is_not_null())["id"].to_pylist()) == [1, 3]


def test_pandas_round_trip(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(FIRST)
    frame = table.to_pandas().sort_values("id").reset_index(drop=True)
    assert list(frame["tags"][0]) == ["a"] and frame["tags"][1] is None
    assert frame["r"][0] == {"a": 1, "b": "p"}
    other = catalog.create_table("db.u", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    other.write_arrow(pa.Table.from_pandas(frame, schema=SCHEMA, preserve_index=False))
    assert as_tuples(other.to_arrow()) == as_tuples(FIRST)


@pytest.mark.parametrize("producer", ["lookup", "full-compaction"])
def test_changelog_row_deduplicate_compares_nested_values(catalog, producer):
    options = {"bucket": "1", "changelog-producer": producer, "changelog-producer.row-deduplicate": "true"}
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=options)
    table.write_arrow(FIRST)
    table.compact(full=True)
    start = table.latest_snapshot().id
    # id 1 and 3 rewritten with equal values (an empty list, map and a ROW of nulls included), id 2 changed deep inside.
    again = rows(
        [1, 2, 3], [1, 2, 3], [["a"], None, []], [[("x", 1)], [("k", None)], None], [{"a": 1, "b": "p"}, None, {"a": None, "b": None}]
    )
    table.write_arrow(again)
    table.compact(full=True)
    changes = table.read_changes(from_snapshot_id=start)
    assert [(r["id"], r["_row_kind"], r["attrs"]) for r in changes.to_pylist()] == [(2, "-U", []), (2, "+U", [("k", None)])]


def test_comparing_a_nested_column_is_a_typed_error(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(FIRST)
    with pytest.raises(lakestore.SchemaMismatchError, match="'tags'"):
        table.to_arrow(filter=lakestore.col("tags") == ["a"])
