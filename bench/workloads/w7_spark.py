"""Workload 7: 10M rows through lakestore.spark (the ``paimon`` data source) with local[2] vs the
single-process writer, the Spark path at half the rows (linearity), and the Spark read vs
``to_arrow`` plus the Arrow-to-JVM transfer floor of a Python data source. Runs in a child process."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from bench import data
from bench.common import LAKESTORE, Context, Measurement, Ratio, Target, WorkloadResult

NUMBER = 7
TITLE = "Spark: 10M rows through the paimon data source (local[2]) vs the single-process writer and reader"
ROOT = Path(__file__).resolve().parent.parent.parent
SPARK = "lakestore.spark local[2]"
FLOOR = "Arrow->JVM floor local[2]"


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    if importlib.util.find_spec("lakestore.spark") is None or importlib.util.find_spec("pyspark") is None:
        res.skipped = "lakestore.spark (or pyspark) is not available"
        return res
    # Spark on 2 shared cores is slow to start and to shuffle: the smoke test keeps it small.
    rows = ctx.spark_rows or (100_000 if ctx.quick else ctx.rows(10_000_000))
    folder = ctx.scratch("w7-input")
    full, half = f"{rows / 1e6:g}M rows", f"{rows / 2e6:g}M rows"
    reps = max(1, ctx.slow_reps - 1)
    inputs = [
        [full, str(data.write_parquet(folder / "full.parquet", rows)), reps],
        [half, str(data.write_parquet(folder / "half.parquet", rows // 2)), 1],
    ]
    spec = folder / "spec.json"
    spec.write_text(json.dumps({"inputs": inputs, "warehouse": str(ctx.scratch("w7-warehouse")), "master": "local[2]"}))
    proc = subprocess.run(
        [sys.executable, "-m", "bench.workloads.w7_child", str(spec)], capture_output=True, text=True, cwd=ROOT, timeout=7200
    )
    if proc.returncode != 0:
        tail = [ln for ln in proc.stderr.strip().splitlines() if "Error" in ln or "error" in ln][-1:] or [str(proc.returncode)]
        res.skipped = f"child failed: {tail[0][:300]}"
        return res
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for label in (full, half):
        res.add(f"write {label}", Measurement(LAKESTORE, out[label]["single"], note="single process, parquet batches streamed"))
        res.add(f"write {label}", Measurement(SPARK, out[label]["spark"], note="write_dataframe(spark.read.parquet), session warm"))
        res.add(f"read {label}", Measurement(LAKESTORE, out[label]["to_arrow"], note="table.to_arrow()"))
        res.add(f"read {label}", Measurement(SPARK, out[label]["spark_read"], note="format('paimon') into the noop sink"))
        res.add(f"read {label}", Measurement(FLOOR, out[label]["floor"], note="Python data source of parquet row groups, noop sink"))
    spark_vs_single = res.median(f"write {full}", SPARK) / res.median(f"write {full}", LAKESTORE)
    read_vs_floor = res.median(f"read {full}", SPARK) / (res.median(f"read {full}", LAKESTORE) + res.median(f"read {full}", FLOOR))
    growth = res.median(f"write {full}", SPARK) / res.median(f"write {half}", SPARK)
    res.ratios.append(Ratio(f"Spark time / single-process time ({full})", spark_vs_single))
    res.ratios.append(Ratio(f"Spark time {full} / Spark time {half} (2.0 = linear)", growth))
    res.ratios.append(Ratio(f"Spark read / (to_arrow + transfer floor) ({full})", read_vs_floor))
    res.targets.append(Target("W7 Spark time / single-process time", spark_vs_single, "<=", 1.5))
    res.targets.append(Target("W7 Spark read / (to_arrow + transfer floor)", read_vs_floor, "<=", 1.5))
    res.targets.append(Target("W7 Spark linear in rows: time(N) / time(N/2)", growth, "<=", 2.2, note="<= 2 plus 10% noise allowance"))
    res.notes.append(
        "both paths read the same parquet file inside the timed section; the Spark session is started and warmed up before timing"
    )
    return res
