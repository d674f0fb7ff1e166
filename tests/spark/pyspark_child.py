"""lakestore's Spark path in one driver process of another pyspark (tests/spark/test_pyspark_versions.py
runs it with that venv's Python and the repository on PYTHONPATH): every step on the tables and
inputs the parent made, each step's outcome in a JSON report, the rows Spark read as parquet files.

``python tests/spark/pyspark_child.py <warehouse> <inputs> <out>``: ``<inputs>`` holds the parquet
files the parent wrote; ``<out>/report.json`` gets ``{"pyspark": version, "features": {...},
"steps": {name: {"ok": true, "value": ..., "seconds": s} | {"error": "Type: message"}}}`` and
``<out>/<step>.parquet`` the rows of the read steps. A failing step is reported, not raised, so the
parent names every step that failed. The parent checks the tables with lakestore itself.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import lakestore
from lakestore import col
from lakestore.format.types import parse_type
from lakestore.spark import compact, compat, create_spark_session, merge_into, read_dataframe, register, write_dataframe
from lakestore.spark.dataframe import bucket_column
from lakestore.spark.types import spark_type

COMMIT_USER = "versions-stream"


def main() -> None:
    warehouse, inputs, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    started = time.perf_counter()
    report: dict[str, Any] = {
        "pyspark": compat.PYSPARK_VERSION,
        "features": {
            "arrow_udf": compat.ARROW_UDF,
            "filter_pushdown": compat.FILTER_PUSHDOWN,
            "stream_arrow_writer": compat.STREAM_ARROW_WRITER,
            "read_limits": compat.READ_LIMITS,
            "time_type": compat.TIME_TYPE,
        },
        "steps": {},
    }
    steps: dict[str, Any] = report["steps"]

    def step(name: str, fn: Callable[[], Any]) -> None:
        begin = time.perf_counter()
        try:
            steps[name] = {"ok": True, "value": fn(), "seconds": round(time.perf_counter() - begin, 2)}
        except Exception as exc:  # noqa: BLE001 - every failure goes to the report
            steps[name] = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-3000:]}

    def error_of(fn: Callable[[], Any]) -> str:
        """What ``fn`` raised (its type and message), or "" when it returned."""
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - the refusal is the result
            return f"{type(exc).__name__}: {exc}"
        return ""

    spark = create_spark_session(
        "local[2]", app_name="pyspark-versions", conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "1g"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    report["session_seconds"] = round(time.perf_counter() - started, 2)
    catalog = lakestore.Catalog(warehouse)
    fixed, dynamic, sink = catalog.get_table("db.fixed"), catalog.get_table("db.dynamic"), catalog.get_table("db.sink")

    def kind(snapshot: Any) -> Any:
        return None if snapshot is None else [snapshot.id, snapshot.commit_kind]

    def rows_to(name: str, df: Any) -> int:
        data = pa.Table.from_batches(df._collect_as_arrow())  # noqa: SLF001 - DataFrame.toArrow is not in every 4.x
        pq.write_table(data, out / f"{name}.parquet")
        return data.num_rows

    # writes: a string-keyed fixed-bucket table (its writer slots computed on Arrow arrays) and a
    # dynamic-bucket table, then an upsert over half of the first
    step("write_fixed", lambda: kind(write_dataframe(spark.read.parquet(str(inputs / "fixed1.parquet")), fixed)))
    step("upsert_fixed", lambda: kind(write_dataframe(spark.read.parquet(str(inputs / "fixed2.parquet")), fixed)))
    step("write_dynamic", lambda: kind(write_dataframe(spark.read.parquet(str(inputs / "dynamic.parquet")), dynamic)))
    # reads: read_dataframe with a filter (pruned on the driver), the source with a WHERE (Spark's)
    step("read_filter", lambda: rows_to("read_filter", read_dataframe(spark, fixed, filter=col("dt") == "2024-01-02")))
    step(
        "read_where",
        lambda: rows_to("read_where", spark.read.format("paimon").option("warehouse", warehouse).load("db.dynamic").where("v >= 500")),
    )
    # merge: delete the matched rows, insert the others (the table read whole, joined, one write)
    step(
        "merge_delete_insert",
        lambda: kind(merge_into(spark.read.parquet(str(inputs / "changes.parquet")), fixed, matched="delete", not_matched="insert")),
    )
    step("compact", lambda: [kind(s) for s in compact(spark, fixed, full=True)])

    # streaming: the paimon stream writer where pyspark has an Arrow one, else its refusal and
    # the documented alternative (foreachBatch + write_dataframe with the batch id)
    def stream_paimon() -> Any:
        query = (
            spark.readStream.schema(spark.read.parquet(str(inputs / "stream")).schema)
            .option("maxFilesPerTrigger", 1)
            .parquet(str(inputs / "stream"))
            .writeStream.format("paimon")
            .option("warehouse", warehouse)
            .option("commit-user", COMMIT_USER)
            .option("checkpointLocation", str(out / "checkpoint-paimon"))
            .start("db.sink")
        )
        try:
            query.processAllAvailable()
        finally:
            query.stop()
        return "written"

    def stream_foreach_batch() -> Any:
        def write(batch: Any, batch_id: int) -> None:
            write_dataframe(batch, sink, commit_user=COMMIT_USER, commit_identifier=batch_id)

        query = (
            spark.readStream.schema(spark.read.parquet(str(inputs / "stream")).schema)
            .option("maxFilesPerTrigger", 1)
            .parquet(str(inputs / "stream"))
            .writeStream.foreachBatch(write)
            .option("checkpointLocation", str(out / "checkpoint-foreach"))
            .start()
        )
        try:
            query.processAllAvailable()
        finally:
            query.stop()
        return "written"

    if compat.STREAM_ARROW_WRITER:
        step("stream_write", stream_paimon)
    else:
        step("stream_write_refused", lambda: error_of(stream_paimon))
        step("stream_write", stream_foreach_batch)

    def stream_read() -> Any:
        source = spark.readStream.format("paimon").option("warehouse", warehouse).option("read.changelog", "true").load("db.dynamic")
        query = source.writeStream.format("memory").queryName("dynamic_changes").start()
        try:
            query.processAllAvailable()
        finally:
            query.stop()
        return rows_to("stream_read", spark.table("dynamic_changes"))

    step("stream_read", stream_read)

    def stream_read_capped() -> Any:
        source = (
            spark.readStream.format("paimon")
            .option("warehouse", warehouse)
            .option("read.changelog", "true")
            .option("max-snapshots-per-trigger", "1")
            .load("db.dynamic")
        )
        query = source.writeStream.format("memory").queryName("capped").start()
        try:
            query.processAllAvailable()
        finally:
            query.stop()
        return spark.table("capped").count()

    step("max_snapshots_per_trigger", lambda: error_of(stream_read_capped) if not compat.READ_LIMITS else stream_read_capped())

    # what differs by version: refused with the version named where pyspark lacks the API
    def pushdown() -> Any:
        register(spark, filter_pushdown=True)
        try:
            return rows_to("read_pushdown", spark.read.format("paimon").option("warehouse", warehouse).load("db.fixed").where("v < 50"))
        finally:
            register(spark)

    step("filter_pushdown", pushdown if compat.FILTER_PUSHDOWN else lambda: error_of(pushdown))
    step("bucket_column", lambda: error_of(lambda: bucket_column(fixed)) or "a column")
    step("time_type", lambda: error_of(lambda: spark_type(parse_type("TIME(3)"))) or "TimeType")
    report["seconds"] = round(time.perf_counter() - started, 2)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
