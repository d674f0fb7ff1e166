"""lakestore.spark.merge_into on a real local SparkSession: each merge reads back as a twin table
changed through the Python API (``Table.upsert`` / ``Table.delete``) and as an in-memory model,
in one MERGE commit whose row kinds are Paimon's (-D rows of a delete, +U of an update);
refusals commit nothing; a rerun commits once; Paimon 2.0.0 Java reads the merged table."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore import col
from lakestore.errors import NullKeyError, OptionError, SchemaMismatchError, UnsupportedTableError
from lakestore.format.kv import DELETE, INSERT
from lakestore.spark import merge_into
from lakestore.spark.options import OPERATION_OPTION, ROW_KIND_COLUMN, operation_of
from lakestore.spark.tasks import write_batch
from tests.oracle.java_driver import java_oracle

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        pa.field("v", pa.int64()),
        pa.field("s", pa.string()),
    ]
)
KEYS = ["dt", "id"]
SPARK_SCHEMA = "dt string, id long, v long, s string"
DEDUP = {"bucket": "2"}
PARTIAL = {"bucket": "2", "merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}
Row = dict[str, Any]


def dt_of(i: int) -> str:
    return "a" if i % 2 else "b"  # ids are unique across partitions: a delete by id is exact


def row(i: int, v: int | None, s: str | None) -> Row:
    return {"dt": dt_of(i), "id": i, "v": v, "s": s}


# the table holds ids 0..5; the source matches 3, 4, 5 and brings 6, 7
TABLE_ROWS = [row(i, i, f"t{i}") for i in range(6)]
SOURCE_ROWS = [row(3, 30, "m3"), row(4, None, "m4"), row(5, 50, None), row(6, 60, "n6"), row(7, 70, "n7")]


def make(catalog: lakestore.Catalog, name: str, options: dict[str, str], rows: list[Row] = TABLE_ROWS) -> lakestore.Table:
    table = catalog.create_table(name, schema=SCHEMA, partition_keys=["dt"], primary_keys=KEYS, options=options)
    table.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
    return table


def read(table: lakestore.Table) -> list[Row]:
    return sorted(table.to_arrow().select(SCHEMA.names).to_pylist(), key=lambda r: r["id"])


def keys_of(rows: list[Row]) -> set[int]:
    return {r["id"] for r in rows}


def model_merge(current: list[Row], source: list[Row], matched: str | None, not_matched: str | None, *, partial: bool = False) -> list[Row]:
    """MERGE INTO on a dict of id -> row; ``partial``: the source's nulls leave stored values."""
    model = {r["id"]: dict(r) for r in current}
    for r in source:
        if r["id"] in model:
            if matched == "delete":
                del model[r["id"]]
            elif matched == "update":
                model[r["id"]] = {**model[r["id"]], **{c: x for c, x in r.items() if x is not None or not partial}}
        elif not_matched == "insert":
            model[r["id"]] = {c: r.get(c) for c in SCHEMA.names}
    return sorted(model.values(), key=lambda r: r["id"])


def twin_merge(twin: lakestore.Table, source: list[Row], matched: str | None, not_matched: str | None) -> None:
    """The same merge through the Python row-level API."""
    stored = keys_of(read(twin))
    hits = [r for r in source if r["id"] in stored]
    misses = [r for r in source if r["id"] not in stored]
    columns = list(source[0])
    if matched == "delete":
        twin.delete(col("id").isin(sorted(keys_of(hits))))
    elif matched == "update":
        twin.upsert(pa.Table.from_pylist(hits, schema=pa.schema([SCHEMA.field(c) for c in columns])))
    if not_matched == "insert":
        twin.upsert(pa.Table.from_pylist(misses, schema=pa.schema([SCHEMA.field(c) for c in columns])))


def kinds(table: lakestore.Table) -> dict[int, str]:
    log = table.inspect.audit_log()
    return dict(zip(log.column("id").to_pylist(), log.column("rowkind").to_pylist(), strict=True))


@pytest.mark.parametrize(
    ("matched", "not_matched"),
    [("update", "insert"), ("update", None), (None, "insert"), ("delete", None), ("delete", "insert")],
)
def test_merge_matches_the_python_api_and_the_model(spark, catalog, matched, not_matched):
    table = make(catalog, "db.t", DEDUP)
    twin = make(catalog, "db.twin", DEDUP)
    before = table.latest_snapshot().id
    snapshot = merge_into(spark.createDataFrame(SOURCE_ROWS, SPARK_SCHEMA), table, matched=matched, not_matched=not_matched)
    twin_merge(twin, SOURCE_ROWS, matched, not_matched)

    want = model_merge(TABLE_ROWS, SOURCE_ROWS, matched, not_matched)
    assert read(table) == read(twin) == want
    # one commit: an APPEND snapshot recording Paimon's MERGE operation
    assert snapshot is not None and snapshot.id == before + 1 == table.latest_snapshot().id
    assert (snapshot.commit_kind, snapshot.operation) == ("APPEND", "MERGE")
    found = kinds(table)
    if matched == "delete":
        assert {found[i] for i in (3, 4, 5)} == {"-D"}  # Paimon's batch DELETE: -D rows of the matched rows
    if matched == "update" and not_matched is None:
        assert {found[i] for i in (3, 4, 5)} == {"+U"}
    if not_matched == "insert":
        assert {found[i] for i in (6, 7)} == {"+I"}
    assert {found[i] for i in (0, 1, 2)} == {"+I"}  # untouched


def test_delete_writes_the_stored_rows(spark, catalog):
    """The -D rows carry the table's full rows (read from it), not the source's values: a source
    of keys only deletes them."""
    table = make(catalog, "db.t", DEDUP)
    keys = spark.createDataFrame([(dt_of(i), i) for i in (1, 2, 9)], "dt string, id long")
    merge_into(keys, table, matched="delete", not_matched=None)
    assert read(table) == [r for r in TABLE_ROWS if r["id"] not in (1, 2)]
    log = table.inspect.audit_log().to_pylist()
    assert sorted((r["id"], r["v"], r["s"]) for r in log if r["rowkind"] == "-D") == [(1, 1, "t1"), (2, 2, "t2")]


def test_partial_update_partial_columns(spark, catalog):
    """Under partial-update the source may carry some columns: the missing ones, written as
    nulls, and the source's own nulls leave the stored values."""
    table = make(catalog, "db.t", PARTIAL)
    twin = make(catalog, "db.twin", PARTIAL)
    source = [{"dt": r["dt"], "id": r["id"], "v": r["v"]} for r in SOURCE_ROWS]
    merge_into(spark.createDataFrame(source, "dt string, id long, v long"), table)
    twin_merge(twin, source, "update", "insert")
    merged = model_merge(TABLE_ROWS, source, "update", "insert", partial=True)
    assert read(table) == read(twin) == merged
    assert [r["s"] for r in merged if r["id"] in (3, 6)] == ["t3", None]  # kept; missing in an inserted row
    # delete with an insert of some columns: the inserted rows' other columns are nulls
    fresh = [{"dt": dt_of(i), "id": i, "s": f"p{i}"} for i in (0, 8)]
    merge_into(spark.createDataFrame(fresh, "dt string, id long, s string"), table, matched="delete")
    twin_merge(twin, fresh, "delete", "insert")
    want = model_merge(merged, fresh, "delete", "insert")
    assert read(table) == read(twin) == want
    assert row(8, None, "p8") in want and 0 not in keys_of(want) and kinds(table)[0] == "-D"


APPEND = {"bucket": "-1"}


@pytest.mark.parametrize(
    ("options", "call", "error", "named"),
    [
        (APPEND, lambda df, t: merge_into(df, t), UnsupportedTableError, "table.delete / table.update"),
        (DEDUP, lambda df, t: merge_into(df, t, on=["id"]), OptionError, "primary key"),
        (DEDUP, lambda df, t: merge_into(df, t, on=["dt", "v"]), OptionError, "primary key"),
        (DEDUP, lambda df, t: merge_into(df, t, matched=None, not_matched=None), OptionError, "nothing to merge"),
        (DEDUP, lambda df, t: merge_into(df, t, matched="insert"), OptionError, "matched must be"),
        (DEDUP, lambda df, t: merge_into(df, t, commit_identifier=3), OptionError, "needs commit_user"),
        (DEDUP, lambda df, t: merge_into(df.withColumnRenamed("s", "zz"), t), SchemaMismatchError, "unknown columns ['zz']"),
        (
            DEDUP,
            lambda df, t: merge_into(df.withColumn("zz", df.v), t, matched="delete", not_matched=None),
            SchemaMismatchError,
            "unknown columns ['zz']",
        ),
        (DEDUP, lambda df, t: merge_into(df.drop("id"), t, matched="delete", not_matched=None), SchemaMismatchError, "['id']"),
        (DEDUP, lambda df, t: merge_into(df.drop("s"), t), SchemaMismatchError, "partial-update"),  # some columns
        (DEDUP, lambda df, t: merge_into(df.selectExpr("dt", "id", "array(v) AS v", "s"), t), SchemaMismatchError, "column 'v'"),
        (DEDUP | {"merge-engine": "aggregation"}, lambda df, t: merge_into(df, t, not_matched=None), UnsupportedTableError, "aggregation"),
        (DEDUP | {"merge-engine": "first-row"}, lambda df, t: merge_into(df, t, matched=None), UnsupportedTableError, "first-row"),
        (
            PARTIAL | {"partial-update.remove-record-on-delete": "false"},
            lambda df, t: merge_into(df, t, matched="delete"),
            UnsupportedTableError,
            "remove-record-on-delete",
        ),
        (DEDUP | {"ignore-delete": "true"}, lambda df, t: merge_into(df, t, matched="delete"), UnsupportedTableError, "ignore-delete"),
        (DEDUP | {"rowkind.field": "s"}, lambda df, t: merge_into(df, t), UnsupportedTableError, "rowkind.field"),
    ],
)
def test_refusals_commit_nothing(spark, catalog, options, call, error, named):
    seeded = [{**r, "s": "+I"} for r in TABLE_ROWS] if "rowkind.field" in options else TABLE_ROWS
    if options == APPEND:
        table = catalog.create_table("db.t", schema=SCHEMA, options=options)
        table.write_arrow(pa.Table.from_pylist(seeded, schema=SCHEMA))
    else:
        table = make(catalog, "db.t", options, rows=seeded)
    before = table.latest_snapshot().id
    with pytest.raises(error, match=re.escape(named)):
        call(spark.createDataFrame(SOURCE_ROWS, SPARK_SCHEMA), table)
    assert table.latest_snapshot().id == before and read(table) == seeded


def test_a_null_key_fails_the_job_and_commits_nothing(spark, catalog):
    table = make(catalog, "db.t", DEDUP)
    before = table.latest_snapshot().id
    with pytest.raises(NullKeyError):
        merge_into(spark.createDataFrame([("a", None, 1, "x")], SPARK_SCHEMA), table, matched=None)
    assert table.latest_snapshot().id == before and read(table) == TABLE_ROWS


def test_rerun_with_the_same_commit_id_commits_once(spark, catalog):
    table = make(catalog, "db.t", DEDUP)
    df = spark.createDataFrame(SOURCE_ROWS, SPARK_SCHEMA)
    first = merge_into(df, table, matched="delete", commit_user="job-1", commit_identifier=7)
    again = merge_into(df, table, matched="delete", commit_user="job-1", commit_identifier=7)
    assert first is not None and again is not None and again.id == first.id == table.latest_snapshot().id
    assert read(table) == model_merge(TABLE_ROWS, SOURCE_ROWS, "delete", "insert")
    # no row matched and none to insert: nothing is committed
    assert merge_into(df.where("id = 3"), table, matched="update", not_matched=None) is None
    assert table.latest_snapshot().id == first.id


def test_write_batch_writes_each_run_with_its_kind(catalog):
    """The write task's side of the row-kind column: runs of kinds in one batch keep their kinds
    (the Spark tests' unions hand a task one kind per batch)."""
    table = make(catalog, "db.t", DEDUP)
    ids, kinds_in = [1, 7, 2, 8, 3], [DELETE, INSERT, DELETE, INSERT, DELETE]
    batch = pa.Table.from_pylist([row(i, i, f"t{i}") for i in ids], schema=SCHEMA).append_column(
        ROW_KIND_COLUMN, pa.array(kinds_in, pa.int8())
    )
    with table.new_write(commit_user="u") as write:
        write_batch(write, batch.to_batches()[0])
        table.new_commit(commit_user="u").commit(write.prepare_commit())
    assert keys_of(read(table)) == {0, 4, 5, 7, 8}
    assert {i: k for i, k in kinds(table).items() if i in ids} == {1: "-D", 2: "-D", 3: "-D", 7: "+I", 8: "+I"}


def test_the_operation_option_holds_paimon_operations():
    assert operation_of({OPERATION_OPTION: "MERGE"}) == "MERGE" and operation_of({}) is None
    with pytest.raises(OptionError, match="MERGED"):
        operation_of({OPERATION_OPTION: "MERGED"})


@pytest.mark.oracle
def test_java_reads_the_merged_table(spark, catalog, tmp_path):
    java = java_oracle()
    table = make(catalog, "db.t", DEDUP)
    merge_into(spark.createDataFrame(SOURCE_ROWS, SPARK_SCHEMA), table, matched="delete")
    merge_into(spark.createDataFrame([row(0, 100, "u0"), row(9, 9, "n9")], SPARK_SCHEMA), table)
    ours = read(table)
    assert ours == model_merge(
        model_merge(TABLE_ROWS, SOURCE_ROWS, "delete", "insert"), [row(0, 100, "u0"), row(9, 9, "n9")], "update", "insert"
    )
    theirs = sorted(java.read(tmp_path / "warehouse", "db.t").select(SCHEMA.names).to_pylist(), key=lambda r: r["id"])
    assert theirs == ours
