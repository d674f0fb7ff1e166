"""Table.delete / update / upsert against an in-memory model (a dict of key -> row), read back by
lakestore and by Paimon 2.0.0 Java; refusals and bad input commit nothing."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lakestore
from lakestore import col
from lakestore.errors import NullKeyError, SchemaMismatchError, UnsupportedTableError
from lakestore.meta.file_scan import live_entries
from lakestore.read.predicate import Predicate
from tests._support import all_files
from tests.oracle.java_driver import java_oracle

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64()), ("s", pa.string())])
KEYS = ["dt", "id"]
ENGINES = {
    "deduplicate": {"bucket": "2"},
    "partial-update": {"bucket": "2", "merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
    "dynamic-bucket": {"bucket": "-1"},
    # -D rows through the deletion-vector writer: level 0 moved up at every commit, older rows marked
    "deletion-vectors": {"bucket": "2", "deletion-vectors.enabled": "true"},
}
Key = tuple[str, int]
Row = dict[str, Any]
Model = dict[Key, Row]


@dataclasses.dataclass(frozen=True)
class Either:
    """A model value the table may hold either of: under partial-update with
    remove-record-on-delete, a -D seeds the key's next insert with the deleted row's values
    (Paimon's PartialUpdateMergeFunction), unless a compaction to the last level dropped the -D
    first (then the insert starts from nulls). Which one happened depends on compaction timing."""

    options: tuple[Any, ...]


def either(ghost: Any) -> Any:
    if ghost is None:
        return None
    options = ghost.options if isinstance(ghost, Either) else (ghost,)
    return Either((*options, None))


def same(actual: list[Row], expected: list[Row]) -> bool:
    def value_ok(a: Any, e: Any) -> bool:
        return a in e.options if isinstance(e, Either) else a == e

    return len(actual) == len(expected) and all(all(value_ok(a[c], e[c]) for c in e) for a, e in zip(actual, expected, strict=True))


_names = itertools.count()

# -- operations: each is (apply to the table, apply to the model) ------------------------------

DTS = st.sampled_from(["a", "b", "c"])
IDS = st.integers(0, 11)
VALUES = st.one_of(st.none(), st.integers(-5, 5))
STRINGS = st.one_of(st.none(), st.sampled_from(["x", "y", "z"]))


@st.composite
def filters(draw: st.DrawFn) -> tuple[Predicate | None, Callable[[Row], bool], str]:
    """A lakestore predicate, the same test on a model row (nulls never match), and its text."""
    kind = draw(st.sampled_from(["v_gt", "ids", "s_eq_and_id", "dt", "none", "v_null_or_dt"]))
    if kind == "v_gt":
        x = draw(st.integers(-5, 5))
        return col("v") > x, lambda r: r["v"] is not None and r["v"] > x, f"v > {x}"
    if kind == "ids":
        ids = draw(st.lists(IDS, min_size=1, max_size=4))
        return col("id").isin(ids), lambda r: r["id"] in ids, f"id in {ids}"
    if kind == "s_eq_and_id":
        s, k = draw(st.sampled_from(["x", "y"])), draw(IDS)
        return (col("s") == s) & (col("id") < k), lambda r: r["s"] == s and r["id"] < k, f"s = {s} and id < {k}"
    if kind == "dt":  # partition columns only: whole partitions dropped
        d = draw(DTS)
        return col("dt") == d, lambda r: r["dt"] == d, f"dt = {d}"
    if kind == "v_null_or_dt":
        d = draw(DTS)
        return col("v").is_null() | (col("dt") == d), lambda r: r["v"] is None or r["dt"] == d, f"v is null or dt = {d}"
    return None, lambda r: True, "everything"


@st.composite
def operations(draw: st.DrawFn, engine: str) -> tuple[str, Any, Any]:
    op = draw(st.sampled_from(["upsert", "upsert", "delete", "update"]))
    if op == "upsert":
        keys = draw(st.lists(st.tuples(DTS, IDS), min_size=1, max_size=8, unique=True))
        rows = [{"dt": d, "id": i, "v": draw(VALUES), "s": draw(STRINGS)} for d, i in keys]
        columns = ["dt", "id", "v", "s"]
        if engine == "partial-update":
            columns = draw(st.sampled_from([["dt", "id", "v", "s"], ["dt", "id", "v"], ["dt", "id", "s"]]))
        return op, rows, columns
    if op == "delete":
        return op, draw(filters()), None
    column = draw(st.sampled_from(["v", "s"]))
    value = draw(VALUES if column == "v" else STRINGS)
    return op, draw(filters()), {column: value}


def apply_to_model(model: Model, engine: str, op: str, arg: Any, extra: Any, ghosts: Model) -> None:
    """``ghosts``: partial-update rows deleted since, whose -D rows may seed the next insert."""
    if op == "upsert":
        for row in arg:
            key = (row["dt"], row["id"])
            given_row = {c: row[c] for c in extra}
            if engine == "partial-update":
                ghost = ghosts.pop(key, {})
                fresh = {"dt": row["dt"], "id": row["id"], "v": either(ghost.get("v")), "s": either(ghost.get("s"))}
                old = model.get(key, fresh)
                model[key] = {**old, **{c: v for c, v in given_row.items() if v is not None}}
            else:
                model[key] = {"v": None, "s": None, **given_row}
        return
    _, test, _ = arg
    matched = [k for k, r in model.items() if test(r)]
    for key in matched:
        if op == "delete":
            if engine == "partial-update":
                ghosts[key] = model[key]
            del model[key]
        else:
            for column, value in extra.items():
                if value is not None or engine != "partial-update":  # partial-update: null changes nothing
                    model[key] = {**model[key], column: value}


def apply_to_table(table: lakestore.Table, op: str, arg: Any, extra: Any) -> None:
    if op == "upsert":
        data = pa.Table.from_pylist(arg, schema=SCHEMA).select(extra)
        table.upsert(data)
    elif op == "delete":
        table.delete(arg[0])
    else:
        table.update(set=extra, filter=arg[0])


def rows_of(table: pa.Table) -> list[Row]:
    return sorted(table.select(SCHEMA.names).to_pylist(), key=lambda r: (r["dt"], r["id"]))


def model_rows(model: Model) -> list[Row]:
    return sorted(({c: r[c] for c in SCHEMA.names} for r in model.values()), key=lambda r: (r["dt"], r["id"]))


@pytest.fixture(scope="module")
def module_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dml") / "wh"
    lakestore.Catalog(str(path)).create_database("db")
    return path


SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.mark.oracle
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_sequences_match_the_model_and_java(module_warehouse: Path, engine: str) -> None:
    """Upserts, deletes and updates in any order: after each, lakestore reads the model's rows;
    after the sequence, Paimon 2.0.0 Java reads them too (also after a full compaction)."""
    java = java_oracle()
    catalog = lakestore.Catalog(str(module_warehouse))

    @SETTINGS
    @given(st.lists(operations(engine), min_size=1, max_size=7))
    def run(ops: list[tuple[str, Any, Any]]) -> None:
        name = f"db.t{next(_names)}"
        table = catalog.create_table(name, schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=ENGINES[engine])
        model: Model = {}
        ghosts: Model = {}
        for op, arg, extra in ops:
            apply_to_table(catalog.get_table(name), op, arg, extra)
            apply_to_model(model, engine, op, arg, extra, ghosts)
            got = rows_of(catalog.get_table(name).to_arrow())
            assert same(got, model_rows(model)), (op, arg[2] if op != "upsert" else arg, extra, got, model_rows(model))
        ours = rows_of(catalog.get_table(name).to_arrow())
        assert rows_of(java.read(module_warehouse, name)) == ours and same(ours, model_rows(model))
        table.compact(full=True)
        assert rows_of(java.read(module_warehouse, name)) == ours

    run()


def test_delete_writes_minus_d_rows_with_new_sequence_numbers(catalog: lakestore.Catalog) -> None:
    """A row-level delete is one APPEND commit of -D rows holding the deleted rows' values, with
    sequence numbers above everything the bucket held (Paimon's batch DELETE)."""
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options={"bucket": "1"})
    table.write_arrow(pa.Table.from_pylist([{"dt": "a", "id": i, "v": i, "s": "x"} for i in range(5)], schema=SCHEMA))
    before = table.store.live_files()
    snapshot = table.delete(col("v") >= 3)
    assert snapshot is not None and snapshot.commit_kind == "APPEND" and snapshot.operation == "DELETE"
    changes = table.read_changes(from_snapshot_id=1)
    assert sorted(changes.to_pylist(), key=lambda r: r["id"]) == [{"dt": "a", "id": i, "v": i, "s": "x", "_row_kind": "-D"} for i in (3, 4)]
    old = [e.file for e in live_entries(table.store.manifests(), table.snapshot(1))]
    new = [e.file for e in live_entries(table.store.manifests(), snapshot) if e.file.file_name not in {f.file_name for f in old}]
    assert len(new) == 1 and new[0].row_count == 2 and new[0].delete_row_count == 2 and new[0].level == 0
    assert new[0].min_sequence_number == max(f.max_sequence_number for f in old) + 1
    assert {f.file_name for f in before} <= {f.file_name for f in table.store.live_files()}
    assert [r["id"] for r in table.to_arrow().to_pylist()] == [0, 1, 2]


def test_partition_filters_drop_partitions(catalog: lakestore.Catalog) -> None:
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options={"bucket": "1"})
    table.write_arrow(pa.Table.from_pylist([{"dt": d, "id": 1, "v": 1, "s": "x"} for d in "abc"], schema=SCHEMA))
    snapshot = table.delete(col("dt").isin(["a", "c"]))
    assert snapshot is not None and snapshot.commit_kind == "OVERWRITE" and snapshot.operation == "TRUNCATE"
    assert {f.partition["dt"] for f in table.store.live_files()} == {"b"}
    assert table.delete(col("dt") == "zz") is None  # no partition matched: nothing committed
    assert table.delete().commit_kind == "OVERWRITE"
    assert table.to_arrow().num_rows == 0


@pytest.mark.oracle
def test_force_produce_changelog_makes_partition_deletes_row_level(java: Any, warehouse: Path, catalog: lakestore.Catalog) -> None:
    """``delete.force-produce-changelog`` (a table Paimon Java made): a partition filter deletes row by row."""
    options = {"bucket": "1", "delete.force-produce-changelog": "true", "changelog-producer": "input"}
    java.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options)
    table = catalog.get_table("db.t")
    table.write_arrow(pa.Table.from_pylist([{"dt": d, "id": 1, "v": 1, "s": "x"} for d in "ab"], schema=SCHEMA))
    snapshot = table.delete(col("dt") == "a")
    assert snapshot is not None and snapshot.commit_kind == "APPEND"
    kinds = table.read_changes(from_snapshot_id=1).column("_row_kind").to_pylist()
    assert kinds == ["-D"]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"merge-engine": "first-row"}, "merge-engine"),
        ({"merge-engine": "partial-update"}, "partial-update.remove-record-on-delete"),
        ({"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, "aggregation.remove-record-on-delete"),
        ({"rowkind.field": "s"}, "rowkind.field"),
        ({"ignore-delete": "true"}, "ignore-delete"),
    ],
)
def test_deletes_refused_by_name_commit_nothing(catalog: lakestore.Catalog, options: dict[str, str], named: str) -> None:
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options={"bucket": "1", **options})
    table.write_arrow(pa.Table.from_pylist([{"dt": "a", "id": 1, "v": 1, "s": "+I"}], schema=SCHEMA))
    files, latest = all_files(table.path), table.latest_snapshot().id
    with pytest.raises(UnsupportedTableError) as raised:
        table.delete(col("id") == 1)
    assert named in raised.value.options
    assert table.latest_snapshot().id == latest and all_files(table.path) == files


def test_aggregation_and_sequence_group_deletes_are_allowed(catalog: lakestore.Catalog) -> None:
    agg = {
        "bucket": "1",
        "merge-engine": "aggregation",
        "fields.v.aggregate-function": "sum",
        "aggregation.remove-record-on-delete": "true",
    }
    table = catalog.create_table("db.agg", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=agg)
    table.write_arrow(pa.Table.from_pylist([{"dt": "a", "id": i, "v": 2, "s": "x"} for i in (1, 1, 2)], schema=SCHEMA))
    table.delete(col("id") == 1)
    assert table.to_arrow().to_pylist() == [{"dt": "a", "id": 2, "v": 2, "s": "x"}]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda t: t.update(set={"id": 3}), SchemaMismatchError),  # primary-key column
        (lambda t: t.update(set={"nope": 3}), SchemaMismatchError),
        (lambda t: t.update(set={"v": "abc"}), SchemaMismatchError),
        (lambda t: t.update(set={"v": 1.5}), SchemaMismatchError),
        (lambda t: t.update(set={}), SchemaMismatchError),
        (lambda t: t.update(set={"v": 1}, filter=col("nope") == 1), SchemaMismatchError),
        (lambda t: t.delete(col("nope") == 1), SchemaMismatchError),
        (lambda t: t.delete("id = 1"), SchemaMismatchError),
        (lambda t: t.upsert(pa.table({"id": [1], "v": [1]})), SchemaMismatchError),  # deduplicate: every column
        (lambda t: t.upsert(pa.table({"dt": ["a"], "id": ["x"], "v": [1], "s": ["y"]})), SchemaMismatchError),
        # a stream whose second table is bad: the first one's files are deleted too
        (
            lambda t: t.upsert([pa.Table.from_pylist([{"dt": "b", "id": 5, "v": 1, "s": "x"}] * 3, schema=SCHEMA), pa.table({"id": [1]})]),
            SchemaMismatchError,
        ),
    ],
)
def test_bad_input_commits_nothing(catalog: lakestore.Catalog, call: Callable[[lakestore.Table], Any], error: type) -> None:
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options={"bucket": "1"})
    table.write_arrow(pa.Table.from_pylist([{"dt": "a", "id": 1, "v": 1, "s": "x"}], schema=SCHEMA))
    files = all_files(table.path)
    with pytest.raises(error):
        call(table)
    assert table.latest_snapshot().id == 1 and all_files(table.path) == files


def test_not_null_columns(catalog: lakestore.Catalog) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("v", pa.int64(), False), ("s", pa.string())])
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options={"bucket": "1", "merge-engine": "partial-update"})
    table.upsert(pa.table({"id": [1], "v": [1], "s": ["x"]}, schema=schema))
    with pytest.raises(NullKeyError):
        table.update(set={"v": None})
    with pytest.raises(NullKeyError):
        table.upsert(pa.table({"id": [1], "s": ["y"]}))  # leaves out a NOT NULL column
    assert table.latest_snapshot().id == 1


def test_append_tables(catalog: lakestore.Catalog) -> None:
    """Append tables without deletion vectors (Spark rewrites their files): whole-partition deletes
    only; update and upsert refused."""
    table = catalog.create_table("db.a", schema=SCHEMA, partition_keys=["dt"])
    table.write_arrow(pa.Table.from_pylist([{"dt": d, "id": 1, "v": 1, "s": "x"} for d in "ab"], schema=SCHEMA))
    with pytest.raises(UnsupportedTableError, match="deletion-vectors.enabled"):
        table.delete(col("id") == 1)
    with pytest.raises(UnsupportedTableError, match="deletion-vectors.enabled"):
        table.update(set={"v": 2})
    with pytest.raises(UnsupportedTableError, match="no primary key"):
        table.upsert(pa.Table.from_pylist([{"dt": "a", "id": 1, "v": 1, "s": "x"}], schema=SCHEMA))
    assert table.latest_snapshot().id == 1
    assert table.delete(col("dt") == "a").commit_kind == "OVERWRITE"
    assert table.to_arrow().column("dt").to_pylist() == ["b"]


def test_update_refused_for_other_engines(catalog: lakestore.Catalog) -> None:
    options = {"bucket": "1", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options)
    with pytest.raises(UnsupportedTableError, match="merge-engine aggregation"):
        table.update(set={"s": "y"})


def test_update_writes_plus_u_rows(catalog: lakestore.Catalog) -> None:
    table = catalog.create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options={"bucket": "1", "changelog-producer": "input"}
    )
    table.write_arrow(pa.Table.from_pylist([{"dt": "a", "id": i, "v": i, "s": "x"} for i in range(3)], schema=SCHEMA))
    snapshot = table.update(set={"s": "y", "v": 7}, filter=col("id") >= 1)
    assert snapshot is not None and snapshot.operation == "UPDATE"
    changes = table.read_changes(from_snapshot_id=1)
    assert sorted(changes.to_pylist(), key=lambda r: r["id"]) == [{"dt": "a", "id": i, "v": 7, "s": "y", "_row_kind": "+U"} for i in (1, 2)]
    assert table.update(set={"s": "z"}, filter=col("id") == 99) is None  # nothing matched: no commit
    assert table.latest_snapshot().id == 2


@pytest.mark.oracle
def test_cross_partition_tables(java: Any, warehouse: Path, catalog: lakestore.Catalog) -> None:
    """A primary key without the partition keys (bucket=-1): -D and +U rows are routed to the
    partition that holds the key, as Paimon's cross-partition upsert routes them."""
    table = catalog.create_table("db.x", schema=SCHEMA, partition_keys=["dt"], primary_keys=["id"], options={"bucket": "-1"})
    table.write_arrow(pa.Table.from_pylist([{"dt": "ab"[i % 2], "id": i, "v": i, "s": "x"} for i in range(6)], schema=SCHEMA))
    table.upsert(pa.Table.from_pylist([{"dt": "c", "id": 0, "v": 0, "s": "moved"}], schema=SCHEMA))
    table.delete(col("v") >= 4)
    table.update(set={"s": "u"}, filter=col("id").isin([0, 1]))
    want = [
        {"dt": "b", "id": 1, "v": 1, "s": "u"},
        {"dt": "a", "id": 2, "v": 2, "s": "x"},
        {"dt": "b", "id": 3, "v": 3, "s": "x"},
        {"dt": "c", "id": 0, "v": 0, "s": "u"},
    ]
    assert rows_of(catalog.get_table("db.x").to_arrow()) == sorted(want, key=lambda r: (r["dt"], r["id"]))
    assert rows_of(java.read(warehouse, "db.x")) == sorted(want, key=lambda r: (r["dt"], r["id"]))


def test_empty_tables_and_streams(catalog: lakestore.Catalog) -> None:
    """Nothing to change commits nothing; upsert takes record batch streams."""
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options={"bucket": "1"})
    assert table.delete(col("v") > 1) is None and table.delete() is None
    assert table.update(set={"s": "y"}) is None
    assert table.latest_snapshot() is None
    data = pa.Table.from_pylist([{"dt": "a", "id": i, "v": i, "s": "x"} for i in range(4)], schema=SCHEMA)
    snapshot = table.upsert(pa.RecordBatchReader.from_batches(SCHEMA, data.to_batches(max_chunksize=2)))
    assert snapshot is not None and snapshot.id == 1 and table.to_arrow().num_rows == 4


@pytest.mark.oracle
def test_partial_update_delete_seeds_the_next_insert_as_paimon(java: Any, warehouse: Path, catalog: lakestore.Catalog) -> None:
    """partial-update with remove-record-on-delete: the -D a DELETE writes carries the deleted row's
    values, and until a compaction drops it, a later insert of the key starts from them (nulls
    change nothing), as Paimon 2.0.0 Java reads the same files."""
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=ENGINES["partial-update"])
    table.upsert(pa.Table.from_pylist([{"dt": "a", "id": 4, "v": None, "s": "y"}], schema=SCHEMA))
    table.delete(col("s") == "y")
    assert table.to_arrow().num_rows == 0
    table.upsert(pa.Table.from_pylist([{"dt": "a", "id": 4, "v": 1, "s": None}], schema=SCHEMA))
    expected = [{"dt": "a", "id": 4, "v": 1, "s": "y"}]
    assert rows_of(table.to_arrow()) == expected
    assert rows_of(java.read(warehouse, "db.t")) == expected
