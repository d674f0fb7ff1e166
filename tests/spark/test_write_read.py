"""Spark write and read of lakestore tables on a real local SparkSession."""

from __future__ import annotations

import decimal
import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import functions as F

import lakestore
from lakestore.meta.schema_change import AddColumn, SetOption
from lakestore.spark import compact, merge_into, read_dataframe, write_dataframe
from tests._support import assert_same_rows, data_files
from tests.oracle.driver import oracle_available, oracle_read
from tests.spark.faults import fault

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("amount", pa.decimal128(12, 2)),
    ]
)


def rows(n: int, *, start: int = 0, dts: tuple[str, ...] = ("2024-01-01", "2024-01-02"), tag: str = "v1") -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "dt": [dts[i % len(dts)] for i in ids],
            "id": ids,
            "name": [f"{tag}-{i}" for i in ids],
            "amount": pa.array([None if i % 7 == 0 else decimal.Decimal(i * 3) / 100 for i in ids], pa.decimal128(12, 2)),
        },
        schema=SCHEMA,
    )


def pk_table(catalog, name: str = "db.t", *, buckets: int = 4, options: dict | None = None, schema: pa.Schema = SCHEMA):
    opts = {"bucket": str(buckets), **(options or {})}
    return catalog.create_table(name, schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options=opts)


def referenced_files(table) -> set[str]:
    out = set()
    for split in table.scan().plan():
        reader = table.store.split_reader()
        for f in split.files:
            out.add(os.path.relpath(reader.file_path(split.partition_values, split.bucket, f), table.path))
    return out


def bucket_of_keys(table) -> dict[tuple, tuple]:
    """(dt, id) -> (partition values, bucket) of every live row, from the table's own plan."""
    out = {}
    reader = table.store.split_reader()
    for split in table.scan().plan():
        keys = reader.read(split, ["dt", "id"], None)
        for dt, key in zip(keys.column("dt").to_pylist(), keys.column("id").to_pylist(), strict=False):
            assert (dt, key) not in out, "a key is live in two buckets"
            out[(dt, key)] = (split.partition_values, split.bucket)
    return out


def test_spark_write_lakestore_read(spark, catalog):
    table = pk_table(catalog)
    data = rows(2000)
    snap = write_dataframe(spark.createDataFrame(data), table)
    assert snap is not None and snap.commit_kind == "APPEND" and snap.id == 1
    assert [s.id for s in table.snapshots()] == [1]  # one commit for the whole job
    assert_same_rows(table.to_arrow(), data, ["dt", "id"])
    splits = table.scan().plan()
    assert len(splits) == 2 * 4
    # one task owned each bucket: one writer, one file, sequence numbers from 0
    for split in splits:
        assert len(split.files) == 1
        assert split.files[0].min_sequence_number == 0
    assert referenced_files(table) == data_files(table.path)


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")
def test_spark_write_oracle_read(spark, catalog):
    table = pk_table(catalog)
    data = rows(1500)
    write_dataframe(spark.createDataFrame(data), table)
    update = rows(300, start=1400, tag="v2")  # overlaps 100 keys, adds 200
    write_dataframe(spark.createDataFrame(update), table)
    expected = pa.concat_tables([data.filter(pc.less(data["id"], 1400)), update])
    assert_same_rows(oracle_read(table.path), expected, ["dt", "id"])
    assert_same_rows(table.to_arrow(), expected, ["dt", "id"])


def test_lakestore_write_spark_read(spark, catalog):
    table = pk_table(catalog)
    first = rows(1000)
    table.write_arrow(first)
    second = rows(500, start=800, tag="v2")
    table.write_arrow(second)
    expected = pa.concat_tables([first.filter(pc.less(first["id"], 800)), second])

    got = read_dataframe(spark, table).toArrow()
    assert_same_rows(got, expected, ["dt", "id"])

    # projection + filter, applied exactly (not only used for pruning)
    flt = (lakestore.col("dt") == "2024-01-02") & (lakestore.col("id") >= 900)
    got = read_dataframe(spark, table, columns=["id", "name"], filter=flt).toArrow()
    want = expected.filter(pc.and_(pc.equal(expected["dt"], "2024-01-02"), pc.greater_equal(expected["id"], 900))).select(["id", "name"])
    assert got.num_rows > 0
    assert_same_rows(got, want, ["id"])

    # time travel
    assert_same_rows(read_dataframe(spark, table, snapshot_id=1).toArrow(), first, ["dt", "id"])


def test_read_balances_many_splits_into_few_tasks(spark, catalog):
    table = pk_table(catalog, buckets=8)
    data = rows(800, dts=tuple(f"2024-01-{d:02d}" for d in range(1, 11)))
    table.write_arrow(data)
    assert len(table.scan().plan()) == 80
    df = read_dataframe(spark, table, max_tasks=3)
    assert df.rdd.getNumPartitions() == 3
    assert_same_rows(df.toArrow(), data, ["dt", "id"])


def test_read_empty_table(spark, catalog):
    table = pk_table(catalog)
    df = read_dataframe(spark, table, columns=["id"])
    assert df.count() == 0
    assert df.schema.fieldNames() == ["id"]


def test_upserts_and_deletes_keep_newest_row(spark, catalog):
    schema = SCHEMA.append(pa.field("op", pa.string(), nullable=False))
    table = pk_table(catalog, schema=schema, options={"rowkind.field": "op"})
    base = rows(600)
    base = base.append_column("op", pa.array(["+I"] * base.num_rows))
    write_dataframe(spark.createDataFrame(base), table)

    # ids 0..99 updated (-U/+U pairs would repeat a key in one write: use +U only), 100..149
    # deleted, 600..649 inserted
    updates = rows(100, tag="v2").append_column("op", pa.array(["+U"] * 100))
    deletes = rows(50, start=100).append_column("op", pa.array(["-D"] * 50))
    inserts = rows(50, start=600, tag="v2").append_column("op", pa.array(["+I"] * 50))
    change = pa.concat_tables([updates, deletes, inserts])
    write_dataframe(spark.createDataFrame(change), table)

    keep = base.filter(pc.greater_equal(base["id"], 150))
    expected = pa.concat_tables([updates, keep, inserts])
    assert_same_rows(table.to_arrow(), expected, ["dt", "id"])
    assert_same_rows(read_dataframe(spark, table).toArrow(), expected, ["dt", "id"])


def test_sequence_field_orders_duplicates_within_one_write(spark, catalog):
    """Rows of one key in one DataFrame reach their task in shuffle order; sequence.field decides."""
    schema = SCHEMA.append(pa.field("ts", pa.int64()))
    table = pk_table(catalog, schema=schema, options={"sequence.field": "ts"})
    versions = [rows(200, tag=f"v{v}").append_column("ts", pa.array([v] * 200, pa.int64())) for v in (3, 1, 2)]
    df = spark.createDataFrame(pa.concat_tables(versions)).repartition(6)
    write_dataframe(df, table)
    assert_same_rows(table.to_arrow(), versions[0], ["dt", "id"])


def test_overwrite_one_partition(spark, catalog):
    table = pk_table(catalog)
    data = rows(400)
    write_dataframe(spark.createDataFrame(data), table)
    fresh = rows(50, start=10_000, dts=("2024-01-01",), tag="new")
    snap = write_dataframe(spark.createDataFrame(fresh), table, overwrite={"dt": "2024-01-01"})
    assert snap is not None and snap.commit_kind == "OVERWRITE"
    untouched = data.filter(pc.equal(data["dt"], "2024-01-02"))
    assert_same_rows(table.to_arrow(), pa.concat_tables([untouched, fresh]), ["dt", "id"])

    # rows outside the overwritten partition are refused and nothing is committed
    with pytest.raises(Exception, match="outside the overwritten partition"):
        write_dataframe(spark.createDataFrame(rows(10)), table, overwrite={"dt": "2024-01-01"})
    assert table.latest_snapshot().id == snap.id

    with pytest.raises(lakestore.PartitionValueError):
        write_dataframe(spark.createDataFrame(fresh), table, overwrite={"nope": 1})


def test_overwrite_a_partition_whose_value_holds_separators(spark, catalog):
    """The typed partition dict reaches the writer as it is: no "k=v,k=v" string in between."""
    schema = pa.schema([pa.field("p", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False)])
    table = catalog.create_table("db.sep", schema=schema, partition_keys=["p"], primary_keys=["p", "id"], options={"bucket": "2"})
    parts = ["a,b=c", "a", "b=c"]
    data = pa.table({"p": [parts[i % 3] for i in range(90)], "id": list(range(90))}, schema=schema)
    write_dataframe(spark.createDataFrame(data), table)
    fresh = pa.table({"p": ["a,b=c"] * 5, "id": list(range(1000, 1005))}, schema=schema)
    snap = write_dataframe(spark.createDataFrame(fresh), table, overwrite={"p": "a,b=c"})
    assert snap is not None and snap.commit_kind == "OVERWRITE"
    kept = data.filter(pc.not_equal(data["p"], "a,b=c"))
    assert_same_rows(table.to_arrow(), pa.concat_tables([kept, fresh]), ["p", "id"])
    assert_same_rows(read_dataframe(spark, table, filter=lakestore.col("p") == "a,b=c").toArrow(), fresh, ["p", "id"])
    with pytest.raises(lakestore.PartitionValueError):
        write_dataframe(spark.createDataFrame(fresh), table, overwrite=[{"p": "a,b=c"}])  # one partition per write


def test_read_dataframe_passes_the_whole_scan(spark, catalog):
    table = pk_table(catalog)
    first = rows(200)
    table.write_arrow(first)
    table.write_arrow(rows(50, start=200))
    assert_same_rows(read_dataframe(spark, table, snapshot_id=1).toArrow(), first, ["dt", "id"])
    when = table.snapshot(1).time_millis
    assert read_dataframe(spark, table, timestamp_ms=when, columns=["id"]).count() == 200
    assert read_dataframe(spark, table, filter=lakestore.col("id") >= 200).count() == 50
    limited = read_dataframe(spark, table, columns=["id"], limit=7)
    assert limited.rdd.getNumPartitions() == 1 and limited.count() == 7
    with pytest.raises(lakestore.SchemaMismatchError, match="nope"):
        read_dataframe(spark, table, columns=["id", "nope"])
    with pytest.raises(lakestore.TagNotFoundError):
        read_dataframe(spark, table, tag="v9")
    with pytest.raises(ValueError, match="at most one"):
        read_dataframe(spark, table, tag="v1", snapshot_id=1)  # before any Spark job


def test_spark_reads_the_snapshot_and_schema_the_tables_scan_options_name(spark, catalog):
    """A table whose options say scan.snapshot-id=1 reads snapshot 1 with the schema it was written
    with, in Spark as through Table.to_arrow (Paimon's batch reads honour scan.* options)."""
    table = pk_table(catalog)
    first = rows(20)
    table.write_arrow(first)
    catalog.alter_table("db.t", [AddColumn("extra", pa.int32())])
    catalog.alter_table("db.t", [SetOption("scan.snapshot-id", "1")])
    table = catalog.get_table("db.t")
    table.write_arrow(rows(5, start=100).append_column("extra", pa.array([1] * 5, pa.int32())))
    expected = table.to_arrow()
    assert expected.column_names == SCHEMA.names and expected.num_rows == 20
    df = spark.read.format("paimon").option("warehouse", catalog.warehouse).load("db.t")
    assert df.columns == SCHEMA.names
    assert_same_rows(df.toArrow(), expected, ["dt", "id"])
    assert_same_rows(read_dataframe(spark, table).toArrow(), expected, ["dt", "id"])


def test_overwrite_whole_table(spark, catalog):
    table = pk_table(catalog)
    write_dataframe(spark.createDataFrame(rows(300)), table)
    fresh = rows(20, start=5000)
    write_dataframe(spark.createDataFrame(fresh), table, overwrite=True)
    assert_same_rows(table.to_arrow(), fresh, ["dt", "id"])


def test_retry_with_same_identifier_commits_once(spark, catalog):
    table = pk_table(catalog)
    df = spark.createDataFrame(rows(500))
    first = write_dataframe(df, table, commit_user="job-1", commit_identifier=7)
    files = data_files(table.path)
    again = write_dataframe(df, table, commit_user="job-1", commit_identifier=7)
    assert again.id == first.id
    assert [s.id for s in table.snapshots()] == [first.id]
    assert data_files(table.path) == files  # the rerun did not even write files
    assert table.to_arrow().num_rows == 500
    # the next identifier of the same user is a new commit
    nxt = write_dataframe(spark.createDataFrame(rows(10, start=500)), table, commit_user="job-1", commit_identifier=8)
    assert nxt.id == first.id + 1 and nxt.commit_identifier == 8
    assert table.to_arrow().num_rows == 510


def test_crashed_task_attempt_leaves_no_referenced_files(spark, catalog, tmp_path):
    table = pk_table(catalog)
    data = rows(1000)
    marker = tmp_path / "crashed"
    with fault(spark, f"after-write:{marker}"):
        snap = write_dataframe(spark.createDataFrame(data), table)
    assert marker.exists(), "no task attempt crashed: the test proved nothing"
    assert snap is not None
    assert_same_rows(table.to_arrow(), data, ["dt", "id"])  # no row twice, none lost
    referenced = referenced_files(table)
    on_disk = data_files(table.path)
    assert referenced < on_disk  # the crashed attempt's files exist...
    for split in table.scan().plan():  # ...but each bucket references only the retried attempt's file
        assert len(split.files) == 1


def test_failed_job_commits_nothing(spark, catalog):
    table = pk_table(catalog)
    write_dataframe(spark.createDataFrame(rows(100)), table)
    bad = rows(100, start=100).to_pylist()
    bad[37]["id"] = None
    bad_schema = pa.schema([f.with_nullable(True) for f in SCHEMA])
    with pytest.raises(lakestore.NullKeyError, match="primary-key column 'id'"):
        write_dataframe(spark.createDataFrame(pa.Table.from_pylist(bad, schema=bad_schema)), table)
    assert [s.id for s in table.snapshots()] == [1]
    assert table.to_arrow().num_rows == 100


def test_schema_mismatch_is_raised_on_the_driver(spark, catalog):
    table = pk_table(catalog)
    df = spark.createDataFrame(rows(5)).withColumnRenamed("name", "nom")
    with pytest.raises(lakestore.SchemaMismatchError, match="nom"):
        write_dataframe(df, table)
    with pytest.raises(lakestore.SchemaMismatchError):
        write_dataframe(spark.createDataFrame(rows(5)).withColumn("id", F.col("id").cast("string")), table)
    assert table.latest_snapshot() is None


def test_empty_dataframe_writes_nothing(spark, catalog):
    table = pk_table(catalog)
    assert write_dataframe(spark.createDataFrame(rows(0)), table) is None
    assert table.latest_snapshot() is None


def test_same_buckets_as_single_process_writer(spark, catalog):
    schema = pa.schema(
        [
            pa.field("dt", pa.string(), nullable=False),
            pa.field("id", pa.int64(), nullable=False),
            pa.field("code", pa.string(), nullable=False),
            pa.field("v", pa.int32()),
        ]
    )
    n = 3000
    data = pa.table(
        {
            "dt": [f"2024-02-{i % 3 + 1:02d}" for i in range(n)],
            "id": [i * 7919 - 10_000 for i in range(n)],
            "code": [f"c{i % 13}" for i in range(n)],
            "v": pa.array(range(n), pa.int32()),
        },
        schema=schema,
    )

    def make(name):
        return catalog.create_table(name, schema=schema, partition_keys=["dt"], primary_keys=["dt", "id", "code"], options={"bucket": "5"})

    via_spark, local = make("db.spark"), make("db.local")
    # int32 in Spark for a BIGINT key: the bucket must hash the conformed (BIGINT) value
    df = spark.createDataFrame(data).withColumn("id", F.col("id").cast("int"))
    write_dataframe(df, via_spark)
    local.write_arrow(data)
    spark_buckets, local_buckets = bucket_of_keys(via_spark), bucket_of_keys(local)
    assert len(local_buckets) == n
    assert spark_buckets == local_buckets
    assert len({b for _, b in local_buckets.values()}) == 5


def test_append_tables(spark, catalog):
    schema = pa.schema([pa.field("k", pa.int64()), pa.field("s", pa.string())])
    data = pa.table({"k": list(range(1000)), "s": [f"s{i}" for i in range(1000)]}, schema=schema)

    unaware = catalog.create_table("db.unaware", schema=schema)
    write_dataframe(spark.createDataFrame(data).repartition(3), unaware)
    write_dataframe(spark.createDataFrame(data.slice(0, 10)), unaware)
    assert_same_rows(unaware.to_arrow(), pa.concat_tables([data, data.slice(0, 10)]))

    fixed = catalog.create_table("db.fixed", schema=schema, options={"bucket": "3", "bucket-key": "k"})
    write_dataframe(spark.createDataFrame(data).repartition(3), fixed)
    assert_same_rows(read_dataframe(spark, fixed).toArrow(), data)
    local = catalog.create_table("db.fixed_local", schema=schema, options={"bucket": "3", "bucket-key": "k"})
    local.write_arrow(data)
    by_bucket = {s.bucket: sorted(fixed.store.split_reader().read(s, ["k"], None).column("k").to_pylist()) for s in fixed.scan().plan()}
    want = {s.bucket: sorted(local.store.split_reader().read(s, ["k"], None).column("k").to_pylist()) for s in local.scan().plan()}
    assert by_bucket == want


def test_a_landed_commit_keeps_its_files_when_the_job_fails_after_it(spark, catalog, tmp_path):
    """The driver's commit worker dies right after the commit landed: Spark aborts the job, and
    the abort must not delete the files the landed snapshot references; a rerun with the same
    identifier then finds the commit and writes nothing."""
    table = pk_table(catalog)
    data = rows(300)
    marker = tmp_path / "crashed-after-commit"
    with fault(spark, f"after-commit:{marker}"), pytest.raises(Exception):  # noqa: B017, PT011 - Spark's wrapper of the crash
        write_dataframe(spark.createDataFrame(data), table, commit_user="job", commit_identifier=3)
    assert marker.exists(), "the commit did not crash: the test proved nothing"
    assert [s.commit_identifier for s in table.snapshots()] == [3]
    assert_same_rows(table.to_arrow(), data, ["dt", "id"])  # every referenced file is there
    again = write_dataframe(spark.createDataFrame(data), table, commit_user="job", commit_identifier=3)
    assert again is not None and again.id == 1 and len(table.snapshots()) == 1


def test_the_helpers_write_and_read_the_branch_of_the_table_they_are_given(spark, catalog):
    """write_dataframe / read_dataframe / merge_into / compact on ``table.on_branch("dev")`` change
    and read that branch, never main (the source is opened on the helpers' table, branch included);
    the source's ``branch`` option reads a branch by name."""
    table = pk_table(catalog)
    table.write_arrow(rows(4))
    table.manage.create_tag("t1")
    dev = table.manage.create_branch("dev", tag="t1")
    extra = rows(3, start=100, tag="dev")
    write_dataframe(spark.createDataFrame(extra.to_pandas()), dev)
    assert table.to_arrow().num_rows == 4 and dev.to_arrow().num_rows == 7
    assert_same_rows(read_dataframe(spark, dev).toArrow(), dev.to_arrow(), ["dt", "id"])
    assert read_dataframe(spark, table).count() == 4
    merge_into(spark.createDataFrame(extra.select(["dt", "id"]).to_pandas()), dev, matched="delete", not_matched=None)
    assert dev.to_arrow().num_rows == 4 and table.to_arrow().num_rows == 4
    before = dev.to_arrow()
    [compacted] = compact(spark, dev, full=True)
    assert compacted.commit_kind == "COMPACT" and dev.latest_snapshot().id == compacted.id
    assert_same_rows(dev.to_arrow(), before, ["dt", "id"])
    assert table.latest_snapshot().id == 1  # main never changed
    by_name = spark.read.format("paimon").option("warehouse", catalog.warehouse).option("branch", "dev").load("db.t")
    assert by_name.count() == 4 and read_dataframe(spark, table).count() == 4
