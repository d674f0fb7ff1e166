"""Child process of workload 7 (keeps the JVM and its memory out of the benchmark process):

    python -m bench.workloads.w7_child SPEC.json

SPEC: {"inputs": [[label, parquet path, reps], ...], "warehouse": dir, "master": "local[2]"}.
For each input: the single-process writer (streaming the parquet file's batches into
``table.write_arrow``) and ``lakestore.spark.write_dataframe(spark.read.parquet(...))``, each into
a fresh table. Prints one JSON line {label: {"single": [s...], "spark": [s...]}}."""

from __future__ import annotations

import gc
import json
import shutil
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from bench.lakeside import create_table


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    warehouse = Path(spec["warehouse"])
    from lakestore.spark import create_spark_session, write_dataframe  # noqa: PLC0415

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
    try:
        warm = fresh()  # the first job pays JVM/JIT and worker start-up: not part of the measurement
        write_dataframe(spark.read.parquet(spec["inputs"][0][1]).limit(10_000), warm)
        for label, path, reps in spec["inputs"]:
            times = []
            for _ in range(reps):
                table = fresh()
                times.append(_timed(lambda table=table, path=path: write_dataframe(spark.read.parquet(path), table)))
                if table.latest_snapshot() is None or table.latest_snapshot().total_record_count != pq.ParquetFile(path).metadata.num_rows:
                    raise RuntimeError(f"spark write of {label} committed the wrong row count")
            results[label]["spark"] = times
    finally:
        spark.stop()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
