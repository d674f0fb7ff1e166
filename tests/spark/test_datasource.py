"""``format("paimon")``: the Python data source as Spark users call it (batch read and write)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql.datasource import EqualTo, GreaterThan, In, Not, StringStartsWith

from lakestore.spark import distribute, register
from lakestore.spark.dataframe import slot_keys
from lakestore.spark.pushdown import to_predicate
from tests._support import assert_same_rows, data_files
from tests.spark.test_write_read import SCHEMA, bucket_of_keys, pk_table, rows

pytestmark = pytest.mark.spark


@pytest.fixture
def wh(catalog):
    return catalog.warehouse


def load(spark, wh: str, name: str = "db.t", **options: str):
    return spark.read.format("paimon").option("warehouse", wh).options(**options).load(name)


def test_format_paimon_round_trip_with_time_travel(spark, catalog, wh):
    register(spark)
    table = pk_table(catalog)
    first = rows(300)
    distribute(spark.createDataFrame(first), table).write.format("paimon").mode("append").option("warehouse", wh).save("db.t")
    table.manage.create_tag("v1")
    update = rows(50, tag="v2")
    distribute(spark.createDataFrame(update), table).write.format("paimon").mode("append").option("warehouse", wh).save("db.t")
    assert [s.commit_kind for s in table.snapshots()] == ["APPEND", "APPEND"]
    assert_same_rows(pa.Table.from_pylist([r.asDict() for r in load(spark, wh).collect()], schema=SCHEMA), table.to_arrow(), ["dt", "id"])
    for opts in ({"snapshot-id": "1"}, {"tag": "v1"}, {"timestamp-millis": str(table.snapshot(1).time_millis)}):
        old = load(spark, wh, **opts)
        assert sorted(r["name"] for r in old.collect()) == sorted(first.column("name").to_pylist())
    # one input partition per planned split group: a small table is one group by default, and
    # max-partitions splits it up to one per split (2 partitions x 4 buckets)
    assert load(spark, wh).rdd.getNumPartitions() == 1
    assert load(spark, wh, **{"max-partitions": "100"}).rdd.getNumPartitions() == len(table.scan().plan()) == 8
    assert load(spark, wh, **{"max-partitions": "3"}).rdd.getNumPartitions() == 3
    projected = load(spark, wh, columns="id,name")
    assert projected.columns == ["id", "name"] and projected.count() == 300


def test_filters_are_pushed_and_exact(spark, catalog, wh):
    register(spark, filter_pushdown=True)
    try:
        table = pk_table(catalog)
        table.write_arrow(rows(400))
        df = load(spark, wh).where((F.col("dt") == "2024-01-02") & (F.col("id") >= 100) & F.col("id").isin(101, 103, 200, 399))
        # pushed filters leave Spark's plan: no Filter node on top of the scan
        assert "Filter" not in df._jdf.queryExecution().optimizedPlan().toString()
        assert sorted(r["id"] for r in df.collect()) == [101, 103, 399]
        # not pushed (decimal literal): Spark filters, still exact
        expected = sum(1 for v in rows(400).column("amount").to_pylist() if v and v > 5)
        assert load(spark, wh).where(F.col("amount") > 5).count() == expected
        assert load(spark, wh).where(F.col("name").isNull()).count() == 0
        assert load(spark, wh).where(F.col("dt") != "2024-01-01").count() == 200
    finally:
        register(spark)


def test_a_dataframe_queried_with_and_without_filters_reads_every_row(spark, catalog, wh):
    """Spark 4.3 reuses the read planned for pushed filters when the same DataFrame is queried
    again without filters: pushdown is off by default, so both queries are right."""
    register(spark)
    table = pk_table(catalog)
    table.write_arrow(rows(400))
    df = load(spark, wh)
    assert df.where(F.col("id") < 5).count() == 5
    assert df.count() == 400
    assert df.where(F.col("dt") == "2024-01-01").count() == 200
    assert df.count() == 400


def test_to_predicate_translation():
    cols = {"id", "dt"}
    assert to_predicate(EqualTo(("id",), 3), cols) is not None
    assert to_predicate(Not(EqualTo(("id",), 3)), cols) is not None
    assert to_predicate(In(("id",), (1, 2)), cols) is not None
    assert to_predicate(GreaterThan(("amount",), 3), cols) is None  # not a pushable column
    assert to_predicate(StringStartsWith(("dt",), "2024"), cols) is None
    assert to_predicate(EqualTo(("a", "b"), 1), cols | {"a"}) is None  # nested field


def test_overwrite_partition_and_idempotent_retry(spark, catalog, wh):
    register(spark)
    table = pk_table(catalog)
    table.write_arrow(rows(100))
    day2 = rows(10, start=1000, dts=("2024-01-02",))

    def overwrite_day2():
        (
            distribute(spark.createDataFrame(day2), table)
            .write.format("paimon")
            .mode("overwrite")
            .option("warehouse", wh)
            .option("overwrite-partition", "dt=2024-01-02")
            .option("commit-user", "job")
            .option("commit-identifier", "5")
            .save("db.t")
        )

    overwrite_day2()
    files = data_files(table.path)
    overwrite_day2()  # a rerun: the landed commit is found, nothing is written
    assert data_files(table.path) == files
    assert [s.commit_kind for s in table.snapshots()] == ["APPEND", "OVERWRITE"]
    out = table.to_arrow()
    assert out.filter(pa.compute.equal(out["dt"], "2024-01-02")).num_rows == 10
    assert out.filter(pa.compute.equal(out["dt"], "2024-01-01")).num_rows == 50


def test_undistributed_pk_write_is_refused_and_leaves_nothing(spark, catalog, wh):
    register(spark)
    table = pk_table(catalog)
    df = spark.createDataFrame(rows(200)).repartition(4)  # every task holds rows of every bucket
    with pytest.raises(Exception, match="distribute the rows by bucket"):
        df.write.format("paimon").mode("append").option("warehouse", wh).save("db.t")
    assert table.latest_snapshot() is None
    assert data_files(table.path) == set()


def test_append_table_needs_no_distribution(spark, catalog, wh):
    register(spark)
    table = catalog.create_table("db.log", schema=SCHEMA, partition_keys=["dt"])
    spark.createDataFrame(rows(200)).repartition(4).write.format("paimon").mode("append").option("warehouse", wh).save("db.log")
    assert table.to_arrow().num_rows == 200
    with pytest.raises(Exception, match="needs a table name|does not exist"):
        spark.read.format("paimon").option("warehouse", wh).load("db.nope").collect()


def test_writer_slots_land_in_their_spark_partition(spark, catalog):
    # the slot keys invert Spark's hash partitioning: slot s goes to partition s
    for tasks in (1, 2, 3, 8):
        keys = [int(k) for k in slot_keys(tasks)]
        df = spark.createDataFrame([(k,) for k in keys], "k int").repartition(tasks, "k")
        assert sorted((r.k, r.p) for r in df.select("k", F.spark_partition_id().alias("p")).collect()) == sorted(
            zip(keys, range(tasks), strict=True)
        )
    # every (partition, bucket) lands in exactly one task, and a balanced input fills every task
    table = pk_table(catalog)
    parts = distribute(spark.createDataFrame(rows(800)), table, tasks=2).select("dt", "id", F.spark_partition_id().alias("p"))
    collected = parts.collect()
    by_id = {(r.dt, r.id): r.p for r in collected}
    table.write_arrow(rows(800))
    owners: dict = {}
    for key, (partition, bucket) in bucket_of_keys(table).items():
        owners.setdefault((partition, bucket), set()).add(by_id[key])
    assert all(len(tasks) == 1 for tasks in owners.values())
    assert {r.p for r in collected} == {0, 1}


def _registered_source(spark) -> int:
    """Identity of the JVM object registered as "paimon" in the session (new on each registration)."""
    manager = spark._jsparkSession.sessionState().dataSourceManager()  # noqa: SLF001
    return spark._jvm.System.identityHashCode(manager.lookupDataSource("paimon"))  # noqa: SLF001


def test_the_source_is_registered_once_per_session(spark, catalog):
    """write_dataframe/read_dataframe and repeated register calls keep the registered source
    (Spark logs "replaced a previously registered data source" on each re-registration), and
    keep the pushdown variant a user chose."""
    from lakestore.spark import read_dataframe, write_dataframe  # noqa: PLC0415
    from lakestore.spark.source import FILTER_PUSHDOWN  # noqa: PLC0415

    register(spark)
    first = _registered_source(spark)
    table = pk_table(catalog)
    for i in range(2):
        write_dataframe(spark.createDataFrame(rows(20, start=i * 20)), table)
        assert read_dataframe(spark, table).count() == 20 * (i + 1)
        register(spark)
    assert _registered_source(spark) == first
    register(spark, filter_pushdown=True)
    pushdown = _registered_source(spark)
    assert pushdown != first
    try:
        write_dataframe(spark.createDataFrame(rows(20, start=40)), table)
        assert read_dataframe(spark, table).count() == 60
        assert _registered_source(spark) == pushdown and spark.conf.get(FILTER_PUSHDOWN) == "true"
    finally:
        register(spark)
    assert spark.conf.get(FILTER_PUSHDOWN) == "false"
