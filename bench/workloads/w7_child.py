"""Child process of workload 7 (keeps the JVM and its memory out of the benchmark process):

    python -m bench.workloads.w7_child SPEC.json

SPEC: {"inputs": [[label, parquet path, reps], ...], "warehouse": dir, "master": "local[2]"}.
For each input: the single-process writer (streaming the parquet file's batches into
``table.write_arrow``) and ``lakestore.spark.write_dataframe(spark.read.parquet(...))`` (the
``paimon`` data source after ``distribute``), each into a fresh table; then the reads of the
written table: ``table.to_arrow()``, ``spark.read.format("paimon")`` into Spark's ``noop`` sink,
and the transfer floor: a minimal Python data source yielding the same rows' Arrow batches (read
from the parquet input, one partition per row group) into the same sink. Prints one JSON line
{label: {"single": [s...], "spark": [s...], "to_arrow": [...], "spark_read": [...], "floor": [...]}}."""

from __future__ import annotations

import gc
import json
import shutil
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from bench.lakeside import create_table


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class _ParquetReader(DataSourceReader):
    def __init__(self, path: str) -> None:
        self.path = path

    def partitions(self):  # type: ignore[no-untyped-def]
        return [InputPartition(i) for i in range(pq.ParquetFile(self.path).num_row_groups)]

    def read(self, partition):  # type: ignore[no-untyped-def]
        yield from pq.ParquetFile(self.path).read_row_group(partition.value).to_batches(max_chunksize=65536)


class ArrowFloor(DataSource):
    """The Arrow-to-JVM transfer floor of a Python data source: parquet row groups as Arrow batches."""

    @classmethod
    def name(cls) -> str:
        return "arrow-floor"

    def schema(self):  # type: ignore[no-untyped-def]
        from pyspark.sql.pandas.types import from_arrow_schema  # noqa: PLC0415

        return from_arrow_schema(pq.read_schema(self.options["path"]))

    def reader(self, schema):  # type: ignore[no-untyped-def]
        return _ParquetReader(self.options["path"])


def _sink(df) -> None:  # type: ignore[no-untyped-def]
    df.write.format("noop").mode("overwrite").save()


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    warehouse = Path(spec["warehouse"])
    from lakestore.spark import create_spark_session, read_dataframe, write_dataframe  # noqa: PLC0415

    results: dict[str, dict[str, list[float]]] = {}
    counter = iter(range(10_000))

    def fresh():  # type: ignore[no-untyped-def]
        shutil.rmtree(warehouse / "bench.db", ignore_errors=True)
        return create_table(warehouse, f"w7_{next(counter)}")

    for label, path, reps in spec["inputs"]:
        times = []
        for _ in range(reps):
            table = fresh()
            times.append(_timed(lambda table=table, path=path: table.write_arrow(pq.ParquetFile(path).iter_batches(batch_size=500_000))))
        results.setdefault(label, {})["single"] = times
    spark = create_spark_session(spec["master"], app_name="lakestore-bench")
    spark.dataSource.register(ArrowFloor)
    try:
        warm = fresh()  # the first job pays JVM/JIT and worker start-up: not part of the measurement
        write_dataframe(spark.read.parquet(spec["inputs"][0][1]).limit(10_000), warm)
        _sink(read_dataframe(spark, warm))  # and the read paths' Python workers
        _sink(spark.read.format("arrow-floor").option("path", spec["inputs"][0][1]).load())
        for label, path, reps in spec["inputs"]:
            times = []
            for _ in range(reps):
                table = fresh()
                times.append(_timed(lambda table=table, path=path: write_dataframe(spark.read.parquet(path), table)))
                if table.latest_snapshot() is None or table.latest_snapshot().total_record_count != pq.ParquetFile(path).metadata.num_rows:
                    raise RuntimeError(f"spark write of {label} committed the wrong row count")
            results[label]["spark"] = times
            results[label]["to_arrow"] = [_timed(lambda table=table: table.to_arrow()) for _ in range(reps)]
            results[label]["spark_read"] = [_timed(lambda table=table: _sink(read_dataframe(spark, table))) for _ in range(reps)]
            floor = spark.read.format("arrow-floor").option("path", path).load()
            results[label]["floor"] = [_timed(lambda floor=floor: _sink(floor)) for _ in range(reps)]
    finally:
        spark.stop()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
