"""The pipeline's per-day Spark overhead: many small daily writes through ``write_dataframe`` on
one warm local session (as the ingestion asset runs them), against Spark's own parquet write of
the same day (the floor of any Spark job) and ``Table.write_arrow`` of it.

    .venv/bin/python -m bench.spark_days                 # 8 days of 30 rows each, local[2]
    .venv/bin/python -m bench.spark_days --days 12 --rows 2000

Per day: wall seconds and CPU seconds of the whole process tree (the Python driver, the Spark JVM
and its Python workers). The first day pays the session's first Python-worker starts and JIT
warm-up, so it is reported apart from the median of the others."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.sf1 import tree_usage


def measure(fn: Callable[[], object]) -> tuple[float, float]:
    pid = os.getpid()
    cpu, wall = tree_usage(pid)[1], time.perf_counter()
    fn()
    return time.perf_counter() - wall, tree_usage(pid)[1] - cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.spark_days", description=__doc__.split("\n\n")[0])
    p.add_argument("--days", type=int, default=8)
    p.add_argument("--rows", type=int, default=30)
    p.add_argument("--master", default="local[2]")
    args = p.parse_args(argv)

    import lakestore  # noqa: PLC0415
    from lakestore.spark import create_spark_session, write_dataframe  # noqa: PLC0415

    spark = create_spark_session(args.master, conf={"spark.driver.memory": "1g"})
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="lakestore-spark-days-"))
    catalog = lakestore.Catalog(str(root / "wh"))
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
    table = catalog.create_table("db.t", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    local = catalog.create_table("db.local", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})
    results: dict[str, list[tuple[float, float]]] = {"spark parquet write (floor)": [], "write_dataframe": [], "Table.write_arrow": []}
    for day in range(args.days):
        landing = root / f"landing-{day}"
        landing.mkdir()
        dt = f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}"
        pq.write_table(pa.table({"dt": [dt] * args.rows, "id": list(range(args.rows)), "v": [1.0] * args.rows}), landing / "a.parquet")
        out = root / f"floor-{day}"
        runs: dict[str, Callable[[], object]] = {
            "spark parquet write (floor)": lambda src=landing, dst=out: (
                spark.read.parquet(str(src)).write.mode("overwrite").parquet(str(dst))
            ),
            "write_dataframe": lambda src=landing, ident=day + 1: write_dataframe(
                spark.read.parquet(str(src)), table, commit_user="ingest", commit_identifier=ident
            ),
            "Table.write_arrow": lambda src=landing: local.write_arrow(pq.read_table(src)),
        }
        for name, fn in runs.items():
            results[name].append(measure(fn))
    print(f"{args.days} days of {args.rows} rows, {args.master}, load average {os.getloadavg()[0]:.2f}")
    print(f"{'':<30} {'first day wall/CPU s':>22} {'median of the rest wall/CPU s':>32}")
    for name, values in results.items():
        first, rest = values[0], values[1:] or values
        wall, cpu = statistics.median(v[0] for v in rest), statistics.median(v[1] for v in rest)
        print(f"{name:<30} {first[0]:>10.3f} / {first[1]:>7.3f} {wall:>19.3f} / {cpu:>8.3f}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
