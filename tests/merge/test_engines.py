"""Deterministic merge-engine cases: typed errors, option validation, and the semantics the
property tests rely on (each pinned on a table, so flush/read/compaction all take part)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import MergeEngineError, OptionError
from tests._support import data_files

KV = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("kind", pa.string())])


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def make(catalog, name, options, schema=KV):
    return catalog.create_table(f"db.{name}", schema=schema, primary_keys=["id"], options={"bucket": "1", **options})


def rows(ids, values, kinds=None, schema=KV):
    return pa.table({"id": ids, "v": values, "kind": kinds or ["+I"] * len(ids)}, schema=schema)


def read(table):
    return {r["id"]: r["v"] for r in table.to_arrow().to_pylist()}


def test_partial_update_rejects_deletes_and_leaves_no_files(catalog, tmp_path):
    t = make(catalog, "pu", {"merge-engine": "partial-update", "rowkind.field": "kind"})
    t.write_arrow(rows([1], [10]))
    before = data_files(t.path)
    with pytest.raises(MergeEngineError, match="ignore-delete"):
        t.write_arrow(rows([1, 2], [None, 5], ["+I", "-D"]))
    assert data_files(t.path) == before
    assert read(t) == {1: 10}
    assert len(t.snapshots()) == 1


def test_partial_update_ignore_delete_drops_retractions(catalog):
    t = make(catalog, "pu", {"merge-engine": "partial-update", "partial-update.ignore-delete": "true", "rowkind.field": "kind"})
    t.write_arrow(rows([1, 2], [10, 20]))
    t.write_arrow(rows([1, 2, 3], [None, 99, 7], ["+U", "-D", "-D"]))
    assert read(t) == {1: 10, 2: 20}


def test_partial_update_null_group_sequence_never_updates_the_group(catalog):
    schema = pa.schema([("id", pa.int64()), ("g", pa.int64()), ("x", pa.int64()), ("y", pa.int64())])
    t = make(catalog, "pug", {"merge-engine": "partial-update", "fields.g.sequence-group": "x"}, schema)
    t.write_arrow(pa.table({"id": [1, 2], "g": [None, 1], "x": [5, 6], "y": [1, None]}, schema=schema))
    t.write_arrow(pa.table({"id": [1, 2], "g": [None, 0], "x": [7, 8], "y": [None, 2]}, schema=schema))
    t.write_arrow(pa.table({"id": [2], "g": [1], "x": [None], "y": [None]}, schema=schema))
    expected = [{"id": 1, "g": None, "x": None, "y": 1}, {"id": 2, "g": 1, "x": None, "y": 2}]
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == expected
    t.compact(full=True)
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == expected


def test_first_row_refuses_retractions_unless_ignore_delete(catalog):
    t = make(catalog, "fr", {"merge-engine": "first-row", "rowkind.field": "kind"})
    t.write_arrow(rows([1], [1]))
    with pytest.raises(MergeEngineError):
        t.write_arrow(rows([1], [2], ["-D"]))
    t2 = make(catalog, "fr2", {"merge-engine": "first-row", "ignore-delete": "true", "rowkind.field": "kind"})
    t2.write_arrow(rows([1], [1]))
    t2.write_arrow(rows([1, 2], [2, 3], ["-D", "+I"]))
    t2.write_arrow(rows([1, 2], [4, 5]))
    assert read(t2) == {1: 1, 2: 3}
    t2.compact(full=True)
    assert read(t2) == {1: 1, 2: 3}


@pytest.mark.parametrize("function", ["min", "max", "first_value", "first_non_null_value", "listagg", "bool_and"])
def test_aggregation_retraction_of_non_retractable_function_is_a_typed_error(catalog, function):
    value_type = {"listagg": pa.string(), "bool_and": pa.bool_()}.get(function, pa.int64())
    schema = pa.schema([("id", pa.int64()), ("v", value_type), ("kind", pa.string())])
    t = make(catalog, "a", {"merge-engine": "aggregation", "fields.v.aggregate-function": function, "rowkind.field": "kind"}, schema)
    value = {"listagg": "x", "bool_and": True}.get(function, 1)
    t.write_arrow(pa.table({"id": [1], "v": [value], "kind": ["+I"]}, schema=schema))
    with pytest.raises(MergeEngineError, match="ignore-retract"):
        t.write_arrow(pa.table({"id": [1], "v": [value], "kind": ["-D"]}, schema=schema))
    # ignore-retract turns the same write into a no-op for that column
    t2 = make(
        catalog,
        "b",
        {
            "merge-engine": "aggregation",
            "fields.v.aggregate-function": function,
            "fields.v.ignore-retract": "true",
            "rowkind.field": "kind",
        },
        schema,
    )
    t2.write_arrow(pa.table({"id": [1], "v": [value], "kind": ["+I"]}, schema=schema))
    t2.write_arrow(pa.table({"id": [1], "v": [value], "kind": ["-U"]}, schema=schema))
    t2.compact(full=True)
    assert t2.to_arrow().column("v").to_pylist() == [value]


@pytest.mark.parametrize("function", ["collect", "merge_map"])
def test_nested_aggregate_functions_are_an_option_error(catalog, function):
    # collect / merge_map need ARRAY / MAP columns, which lakestore does not support.
    with pytest.raises(OptionError, match=function):
        t = make(catalog, "n", {"merge-engine": "aggregation", "fields.v.aggregate-function": function})
        t.write_arrow(rows([1], [1]))


@pytest.mark.parametrize(("function", "value_type"), [("sum", pa.string()), ("bool_or", pa.int64()), ("listagg", pa.int64())])
def test_aggregate_function_on_wrong_type_is_an_option_error(catalog, function, value_type):
    schema = pa.schema([("id", pa.int64()), ("v", value_type)])
    with pytest.raises(OptionError):
        t = make(catalog, "w", {"merge-engine": "aggregation", "fields.v.aggregate-function": function}, schema)
        t.write_arrow(pa.table({"id": [1], "v": [None]}, schema=schema))


def test_unknown_aggregate_function_is_an_option_error(catalog):
    with pytest.raises(OptionError, match="nosuch"):
        t = make(catalog, "u", {"merge-engine": "aggregation", "fields.v.aggregate-function": "nosuch"})
        t.write_arrow(rows([1], [1]))


def test_count_is_stable_across_compactions(catalog):
    # Paimon's FieldCountAgg adds 1 per merge step, so merging two already-merged counts
    # undercounts; lakestore counts non-null values at write time and sums them when merging.
    t = make(catalog, "c", {"merge-engine": "aggregation", "fields.v.aggregate-function": "count"})
    t.write_arrow(rows([1, 1, 2], [5, None, 7]))
    t.write_arrow(rows([1, 1], [5, 5]))
    t.compact(full=True)
    t.write_arrow(rows([1, 2, 2], [1, None, 3]))
    t.write_arrow(rows([1], [1]))
    assert read(t) == {1: 5, 2: 2}
    t.compact(full=True)
    assert read(t) == {1: 5, 2: 2}


def test_sum_count_product_retract(catalog):
    schema = pa.schema([("id", pa.int64()), ("s", pa.int64()), ("c", pa.int64()), ("pr", pa.int64()), ("kind", pa.string())])
    t = make(
        catalog,
        "r",
        {
            "merge-engine": "aggregation",
            "rowkind.field": "kind",
            "fields.s.aggregate-function": "sum",
            "fields.c.aggregate-function": "count",
            "fields.pr.aggregate-function": "product",
        },
        schema,
    )
    t.write_arrow(pa.table({"id": [1, 1, 1], "s": [5, 7, 1], "c": [1, 1, 1], "pr": [3, 5, 7], "kind": ["+I", "+I", "+I"]}, schema=schema))
    # An integer product retraction merged with its insert in one write is exact.
    t.write_arrow(pa.table({"id": [1, 1], "s": [7, None], "c": [0, None], "pr": [2, 2], "kind": ["-U", "+U"]}, schema=schema))
    got = t.to_arrow().to_pylist()
    # count: three non-null inserts, one non-null retraction (its value does not matter)
    assert got == [{"id": 1, "s": 6, "c": 2, "pr": 105, "kind": "+U"}]
    t.compact(full=True)
    assert t.to_arrow().to_pylist() == got


def test_integer_product_lone_retraction_is_refused_and_table_unchanged(catalog):
    t = make(catalog, "ip", {"merge-engine": "aggregation", "rowkind.field": "kind", "fields.v.aggregate-function": "product"})
    t.write_arrow(rows([1, 1], [3, 5]))
    before = data_files(t.path)
    with pytest.raises(MergeEngineError, match="not an integer"):
        t.write_arrow(rows([1], [3], ["-D"]))
    assert data_files(t.path) == before and read(t) == {1: 15}
    # The retraction together with its insert in one write is exact.
    t.write_arrow(rows([1, 1], [7, 7], ["+I", "-D"]))
    assert read(t) == {1: 15}


def test_listagg_delimiter_and_order(catalog):
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    t = make(
        catalog, "l", {"merge-engine": "aggregation", "fields.v.aggregate-function": "listagg", "fields.v.list-agg-delimiter": ";"}, schema
    )
    t.write_arrow(pa.table({"id": [1, 1], "v": ["a", None]}, schema=schema))
    t.write_arrow(pa.table({"id": [1], "v": ["b"]}, schema=schema))
    t.compact(full=True)
    t.write_arrow(pa.table({"id": [1, 1], "v": ["c", "d"]}, schema=schema))
    assert t.to_arrow().column("v").to_pylist() == ["a;b;c;d"]


def test_deduplicate_sequence_field_older_version_loses(catalog):
    schema = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("ts", pa.int64())])
    t = make(catalog, "d", {"sequence.field": "ts"}, schema)
    t.write_arrow(pa.table({"id": [1, 2], "v": [1, 1], "ts": [10, 10]}, schema=schema))
    t.compact(full=True)
    t.write_arrow(pa.table({"id": [1, 2], "v": [2, 2], "ts": [9, 10]}, schema=schema))
    assert read(t) == {1: 1, 2: 2}
    t.compact(full=True)
    assert read(t) == {1: 1, 2: 2}
