"""Workload 10: many partitions and small files. 1M rows of two years of days (730 daily
partitions) into a primary-key table with 2 buckets in one commit (1,460 data files), against
``pyarrow.dataset.write_dataset`` of the same rows partitioned by day (730 files, hive layout).

The systems run interleaved, one after the other in each repetition. Both wall and CPU time
(``time.process_time``: every thread of this process) are reported; on a shared machine the CPU
ratio is the steadier one. The per-file cost is the time divided by the files written."""

from __future__ import annotations

import statistics
import time

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

import lakestore
from bench.common import LAKESTORE, PYARROW, Context, Measurement, Ratio, Target, WorkloadResult
from lakestore.format.arrow_ops import from_numpy

NUMBER = 10
TITLE = "Many partitions and small files: 1M rows into 730 daily partitions x 2 buckets, one commit"
STEP = "write (wall)"
CPU_STEP = "write (CPU of the process)"
DAYS = 730


def rows(n: int) -> pa.Table:
    rng = np.random.default_rng(10)
    days = (np.datetime64("2023-01-01") + rng.integers(0, DAYS, n)).astype(str)
    ids = np.arange(n, dtype=np.int64)
    return pa.table(
        {
            "dt": pa.array(days.tolist(), pa.string()),
            "id": from_numpy(ids),
            "price": from_numpy(rng.random(n)),
            "name": pa.array(np.char.add("item-", (ids % 1000).astype(str)).tolist(), pa.string()),
        }
    )


def _lakestore(data: pa.Table, ctx: Context, i: int) -> tuple[float, float, int]:
    catalog = lakestore.Catalog(str(ctx.scratch(f"w10-lake-{i}")))
    catalog.create_database("bench", exist_ok=True)
    table = catalog.create_table(
        "bench.days", schema=data.schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"}
    )
    cpu, wall = time.process_time(), time.perf_counter()
    table.write_arrow(data)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    files = sum(len(split.files) for split in table.scan().plan())
    return wall, cpu, files


def _pyarrow(data: pa.Table, ctx: Context, i: int) -> tuple[float, float, int]:
    out = ctx.scratch(f"w10-pyarrow-{i}")
    cpu, wall = time.process_time(), time.perf_counter()
    ds.write_dataset(
        data,
        str(out),
        format="parquet",
        partitioning=ds.partitioning(pa.schema([("dt", pa.string())]), flavor="hive"),
        existing_data_behavior="overwrite_or_ignore",
        max_partitions=DAYS + 1,
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, sum(1 for p in out.rglob("*.parquet"))


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    n = ctx.rows(1_000_000)
    data = rows(n)
    results: dict[str, list[tuple[float, float, int]]] = {LAKESTORE: [], PYARROW: []}
    for i in range(ctx.reps):
        order = [(LAKESTORE, _lakestore), (PYARROW, _pyarrow)]
        for label, fn in order if i % 2 == 0 else order[::-1]:
            results[label].append(fn(data, ctx, i))
            ctx.scratch(f"w10-lake-{i}" if label == LAKESTORE else f"w10-pyarrow-{i}")  # free the disk
    for label, runs in results.items():
        note = f"{runs[0][2]:,} files" + (" (2 buckets per day)" if label == LAKESTORE else " (one per day)")
        res.add(STEP, Measurement(label, [r[0] for r in runs], note=note))
        res.add(CPU_STEP, Measurement(label, [r[1] for r in runs], note=note))
    wall = {k: statistics.median(r[0] for r in v) for k, v in results.items()}
    cpu = {k: statistics.median(r[1] for r in v) for k, v in results.items()}
    files = {k: v[0][2] for k, v in results.items()}
    res.ratios.append(Ratio("lakestore rows/s (wall)", n / wall[LAKESTORE], unit="rows/s"))
    res.ratios.append(Ratio("wall time / write_dataset wall time", wall[LAKESTORE] / wall[PYARROW]))
    res.ratios.append(Ratio("CPU time / write_dataset CPU time", cpu[LAKESTORE] / cpu[PYARROW]))
    per_file = {k: cpu[k] / files[k] for k in cpu}
    res.ratios.append(Ratio("CPU per file / write_dataset CPU per file", per_file[LAKESTORE] / per_file[PYARROW]))
    res.facts.append(("rows / days / buckets", f"{n:,} / {DAYS} / 2"))
    res.facts.append(("CPU ms per file", ", ".join(f"{k} {v * 1000:.2f}" for k, v in per_file.items())))
    res.targets.append(
        Target(
            "W10 730-partition write: lakestore CPU time / write_dataset CPU time",
            cpu[LAKESTORE] / cpu[PYARROW],
            "<=",
            1.0,
            note="CPU time: the shared machine's load makes wall time unsteady",
        )
    )
    res.targets.append(Target("W10 CPU per file / write_dataset CPU per file", per_file[LAKESTORE] / per_file[PYARROW], "<=", 1.0))
    return res
