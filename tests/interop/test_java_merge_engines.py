"""All four merge engines both ways with Paimon Java (2.0.0; the one-way cases also with 1.4.2):
level-0 runs, compacted levels, row-kind deletes, sequence fields, and writers of both engines
interleaved on one table."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import OptionError, SchemaMismatchError, UnsupportedTableError
from tests.compact._tables import live_files
from tests.interop.conftest import same_rows
from tests.oracle.java_driver import JavaOracleError

SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.int64()),
        ("w", pa.string()),
        ("kind", pa.string()),
    ]
)
KEYS = ["dt", "id"]
ENGINES: dict[str, dict[str, str]] = {
    "deduplicate": {"rowkind.field": "kind"},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "fields.w.aggregate-function": "max"},
    "first-row": {"merge-engine": "first-row"},
}
Row = tuple[str, int, Any, Any, str]
# Five commits of (dt, id, v, w, kind); "-D" only where the engine takes deletes.
COMMITS: list[list[Row]] = [
    [("a", i, i, f"w{i}", "+I") for i in range(6)] + [("b", i, 10 * i, None, "+I") for i in range(3)],
    [("a", 1, None, "x1", "+I"), ("a", 2, 20, None, "+I"), ("b", 0, 5, "y0", "+I"), ("a", 7, 7, "w7", "+I")],
    [("a", 3, 33, "z3", "+I"), ("b", 1, None, None, "+I"), ("a", 4, 1, "a4", "-D")],
    [("a", 1, 100, None, "+I"), ("b", 2, 2, "q2", "+I"), ("a", 8, 8, None, "+I")],
    [("a", 5, None, "last", "+I"), ("b", 0, 1, None, "-D"), ("a", 9, 9, "w9", "+I")],
]


def commit_rows(engine: str, index: int) -> list[Row]:
    rows = COMMITS[index]
    return rows if engine == "deduplicate" else [r for r in rows if r[4] == "+I"]


def as_table(rows: list[Row]) -> pa.Table:
    columns = list(zip(*rows, strict=True))
    return pa.table({name: list(values) for name, values in zip(SCHEMA.names, columns, strict=True)}, schema=SCHEMA)


def model(engine: str, commits: int) -> pa.Table:
    state: dict[tuple[str, int], list[Any]] = {}
    for index in range(commits):
        for dt, key, v, w, kind in commit_rows(engine, index):
            old = state.get((dt, key))
            if kind == "-D":
                state.pop((dt, key), None)
            elif old is None or engine == "deduplicate":
                state[(dt, key)] = [v, w, kind]
            elif engine == "partial-update":
                state[(dt, key)] = [v if v is not None else old[0], w if w is not None else old[1], kind]
            elif engine == "aggregation":
                total = None if old[0] is None and v is None else (old[0] or 0) + (v or 0)
                biggest = max((x for x in (old[1], w) if x is not None), default=None)
                state[(dt, key)] = [total, biggest, kind]
    rows = [(dt, key, *values) for (dt, key), values in state.items()]
    return as_table(rows) if rows else SCHEMA.empty_table()


def options(engine: str) -> dict[str, str]:
    return {"bucket": "2", **ENGINES[engine]}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_lakestore_writes_java_reads(java_any, catalog, warehouse, engine):
    java = java_any
    # write-only keeps level-0 runs for merge-on-read; first-row moves level 0 up at every
    # commit (Paimon's readers skip it), so it writes as Paimon's writers do
    write_only = {"write-only": "true"} if engine != "first-row" else {}
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options={**options(engine), **write_only})
    for index in range(3):
        table.write_arrow(as_table(commit_rows(engine, index)))
    expected = model(engine, 3)
    if engine != "first-row":
        assert any(f.level == 0 for f in live_files(table))
    same_rows(table.to_arrow(), expected, KEYS)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    table.compact(full=True)
    assert all(f.level > 0 for f in live_files(table))
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    same_rows(lakestore.Table.from_path(table.path).to_arrow(), expected, KEYS)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_java_writes_lakestore_reads(java_any, catalog, warehouse, engine):
    java = java_any
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=options(engine))
    for index in range(3):
        java.write(warehouse, "db.t", as_table(commit_rows(engine, index)))
    expected = model(engine, 3)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    java.compact(warehouse, "db.t")
    table = catalog.get_table("db.t")
    assert all(f.level > 0 for f in live_files(table))
    same_rows(table.to_arrow(), expected, KEYS)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_writers_of_both_engines_interleave_on_one_table(java, catalog, warehouse, engine):
    table = catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options(engine))
    steps = ["lakestore", "java", "lakestore+compact", "java+compact", "lakestore"]
    for index, step in enumerate(steps):
        data = as_table(commit_rows(engine, index))
        if step.startswith("java"):
            java.write(warehouse, "db.t", data)
            if step.endswith("compact"):
                java.compact(warehouse, "db.t")
        else:
            table = catalog.get_table("db.t")
            table.write_arrow(data)
            if step.endswith("compact"):
                table.compact(full=True)
        expected = model(engine, index + 1)
        same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
        same_rows(java.read(warehouse, "db.t"), expected, KEYS)


def test_sequence_field_decides_both_ways(java, catalog, warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("seq", pa.int64()), ("v", pa.string())])
    opts = {"bucket": "1", "sequence.field": "seq"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=opts)
    table.write_arrow(pa.table({"id": [1, 2], "seq": [10, 10], "v": ["new", "new"]}, schema=schema))
    java.write(warehouse, "db.t", pa.table({"id": [1, 2], "seq": [5, 20], "v": ["old", "newer"]}, schema=schema))
    table = catalog.get_table("db.t")
    table.write_arrow(pa.table({"id": [2], "seq": [15], "v": ["stale"]}, schema=schema))
    expected = pa.table({"id": [1, 2], "seq": [10, 20], "v": ["new", "newer"]}, schema=schema)
    same_rows(table.to_arrow(), expected, ["id"])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])


@pytest.mark.parametrize("engine", ["deduplicate", "first-row", "partial-update"])
def test_ignore_delete_drops_retractions_in_both_engines(java, catalog, warehouse, engine):
    """``ignore-delete``: -U/-D rows are dropped when written (Paimon's RowKindFilter), so the
    "-D" rows of COMMITS change nothing; lakestore's deduplicate applied them."""
    opts = {"bucket": "2", "merge-engine": engine, "rowkind.field": "kind", "ignore-delete": "true"}
    if engine == "deduplicate":
        del opts["merge-engine"]
    table = catalog.create_table("db.ours", schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=opts)
    java.create_table(warehouse, "db.ref", SCHEMA, primary_keys=KEYS, partition_keys=["dt"], options=opts)
    for rows in COMMITS:
        table.write_arrow(as_table(rows))
        java.write(warehouse, "db.ref", as_table(rows))
    expected = java.read(warehouse, "db.ref")
    assert expected.num_rows == model(engine, len(COMMITS)).num_rows + (2 if engine == "deduplicate" else 0)
    same_rows(catalog.get_table("db.ours").to_arrow(), expected, KEYS)
    same_rows(java.read(warehouse, "db.ours"), expected, KEYS)
    same_rows(catalog.get_table("db.ref").to_arrow(), expected, KEYS)


def test_partial_update_with_a_stateful_aggregate_function_is_refused(java, catalog, warehouse):
    """Paimon's first_value (a stateful aggregator) in a sequence group is not implemented:
    lakestore refuses to read or write such a table rather than merge it differently."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("g", pa.int64()), ("b", pa.int64())])
    opts = {"bucket": "1", "merge-engine": "partial-update", "fields.g.sequence-group": "b", "fields.b.aggregate-function": "first_value"}
    java.create_table(warehouse, "db.t", schema, primary_keys=["id"], options=opts)
    for g, b in ((1, 2), (2, 8)):
        java.write(warehouse, "db.t", pa.table({"id": [1], "g": [g], "b": [b]}, schema=schema))
    table = catalog.get_table("db.t")
    with pytest.raises(UnsupportedTableError, match="first_value") as info:
        table.to_arrow()
    assert info.value.options == ("fields.b.aggregate-function",)
    with pytest.raises(UnsupportedTableError, match="first_value"):
        table.write_arrow(pa.table({"id": [1], "g": [3], "b": [1]}, schema=schema))


GROUPED = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("g1", pa.int64()),
        ("a", pa.string()),
        ("b", pa.int64()),
        ("g2", pa.int64()),
        ("c", pa.string()),
    ]
)
GROUPED_COMMITS = [
    [(1, 1, "a1", 1, 1, "c1"), (2, None, "a2", 2, None, None), (3, 5, "x", None, 5, "y")],
    [(1, 0, "old", 9, 2, "c2"), (2, 3, None, 3, 1, "c3"), (3, None, "n", 7, None, "m")],
    [(1, 2, None, None, 2, "c4"), (2, 3, "a3", None, 0, "z"), (3, 5, "p", 1, 6, None)],
    [(1, 2, "a9", 9, None, "c9"), (2, None, "n", 1, 3, None), (3, 5, "q", 2, 5, "r")],
]
GROUPINGS = {
    "two-groups": {"fields.g1.sequence-group": "a,b", "fields.g2.sequence-group": "c"},
    "two-field-sequence": {"fields.g1,g2.sequence-group": "a,b"},
    "last-non-null-outside": {"fields.g1.sequence-group": "a,b", "fields.c.aggregate-function": "last_non_null_value"},
    # aggregate functions within sequence groups: agg for a newer group sequence, reversed for an older
    "sum-and-listagg": {
        "fields.g1.sequence-group": "a,b",
        "fields.b.aggregate-function": "sum",
        "fields.g2.sequence-group": "c",
        "fields.c.aggregate-function": "listagg",
    },
    "max-and-last-non-null": {
        "fields.g1,g2.sequence-group": "a,b",
        "fields.b.aggregate-function": "max",
        "fields.a.aggregate-function": "last_non_null_value",
    },
    "default-function": {"fields.g1.sequence-group": "a,b,c", "fields.default-aggregate-function": "last_non_null_value"},
    "min-last-value": {
        "fields.g2.sequence-group": "b,c",
        "fields.b.aggregate-function": "min",
        "fields.c.aggregate-function": "last_value",
    },
}


@pytest.mark.parametrize("grouping", list(GROUPINGS))
def test_partial_update_sequence_groups_agree_with_java(java, catalog, warehouse, grouping):
    """A group's fields come from the row with the greatest group sequence (several sequence
    fields compared in order, null lowest), a row with a null sequence never updates its group."""
    opts = {"bucket": "1", "merge-engine": "partial-update", **GROUPINGS[grouping]}
    table = catalog.create_table("db.ours", schema=GROUPED, primary_keys=["id"], options=opts)
    java.create_table(warehouse, "db.ref", GROUPED, primary_keys=["id"], options=opts)
    for rows in GROUPED_COMMITS:
        data = pa.Table.from_pylist([dict(zip(GROUPED.names, r, strict=True)) for r in rows], schema=GROUPED)
        table.write_arrow(data)
        java.write(warehouse, "db.ref", data)
    expected = java.read(warehouse, "db.ref")
    same_rows(catalog.get_table("db.ours").to_arrow(), expected, ["id"])
    same_rows(catalog.get_table("db.ref").to_arrow(), expected, ["id"])
    catalog.get_table("db.ours").compact(full=True)
    same_rows(java.read(warehouse, "db.ours"), expected, ["id"])


PAIMON_REFUSES = {
    "first-row-with-sequence-field": {"merge-engine": "first-row", "sequence.field": "v"},
    "first-row-with-input-changelog": {"merge-engine": "first-row", "changelog-producer": "input"},
    "first-row-with-full-compaction-changelog": {"merge-engine": "first-row", "changelog-producer": "full-compaction"},
    "retained-min-above-max": {"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "2"},
    # columns named as Paimon's system fields (lakestore's writes to a _SEQUENCE_NUMBER column
    # failed with KeyError 'Field "_SEQUENCE_NUMBER" exists 2 times in schema')
    "column-_SEQUENCE_NUMBER": {},
    "column-_KEY_v": {},
    "column-rowkind": {},
}


@pytest.mark.parametrize("case", list(PAIMON_REFUSES))
def test_tables_paimon_refuses_are_not_created(java, catalog, warehouse, case):
    """Paimon 2.0's SchemaValidation refuses these tables ('Do not support use sequence field on
    FIRST_ROW merge engine', 'Only support none and lookup changelog-producer on FIRST_ROW merge
    engine', 'snapshot.num-retained.min should not be larger than snapshot.num-retained.max',
    'Field name[_SEQUENCE_NUMBER] in schema cannot be exist in [...]', '... cannot start with
    [_KEY_]'); lakestore refuses them too, by name, and writes nothing."""
    opts = {"bucket": "1", **PAIMON_REFUSES[case]}
    column = case.removeprefix("column-") if case.startswith("column-") else "v"
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), (column, pa.int64())])
    if "sequence.field" in opts:
        opts["sequence.field"] = column
    with pytest.raises(JavaOracleError):
        java.create_table(warehouse, "db.j", schema, primary_keys=["id"], options=opts)
    error = SchemaMismatchError if case.startswith("column-") else OptionError
    with pytest.raises(error) as info:
        catalog.create_table("db.l", schema=schema, primary_keys=["id"], options=opts)
    assert (column if case.startswith("column-") else next(iter(PAIMON_REFUSES[case]))) in str(info.value)
    assert not catalog.table_exists("db.l")
