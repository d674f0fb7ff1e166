"""Workload 6: a 10M-row primary-key write with the default write buffer: rows/s and peak RSS
(measured in a child process that streams the input, so the input is never all in memory)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import data
from bench.common import LAKESTORE, Context, Measurement, Ratio, Target, WorkloadResult
from bench.workloads import w1_pk_write

NUMBER = 6
TITLE = "10M-row primary-key write, default write buffer: throughput and peak RSS"
STEP = "write 10M rows (1 commit)"
ROOT = Path(__file__).resolve().parent.parent.parent


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    rows = ctx.rows(10_000_000)
    source = data.write_stream(ctx.scratch("w6-input") / "input.arrows", rows)
    outs = []
    for i in range(ctx.slow_reps):
        proc = subprocess.run(
            [sys.executable, "-m", "bench.workloads.w6_child", str(source), str(ctx.scratch(f"w6-{i}"))],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=3600,
        )
        if proc.returncode != 0:
            res.skipped = f"child failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}"
            return res
        outs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        ctx.scratch(f"w6-{i}")  # free the disk space
    m = res.add(
        STEP.replace("10M", f"{rows / 1e6:g}M"),
        Measurement(LAKESTORE, [o["seconds"] for o in outs], note="streamed from an Arrow IPC stream file"),
    )
    assert m is not None
    peak_gib = max(o["peak_rss_kib"] for o in outs) / 1024 / 1024
    base_mib = min(o["baseline_rss_kib"] for o in outs) / 1024
    rows_per_s = rows / m.median
    res.facts.append(
        (
            "peak RSS",
            f"{peak_gib:.2f} GiB (process after imports and table creation: {base_mib:.0f} MiB); {outs[-1]['files']} data files written",
        )
    )
    if "w1_rows_per_s" not in ctx.shared:
        w1_pk_write.lakestore_measure(ctx, ctx.reps)
        res.notes.append("workload 1 was not in this run: its lakestore write was timed here for the throughput comparison")
    w1 = ctx.shared["w1_rows_per_s"]
    res.ratios.append(Ratio("lakestore throughput", rows_per_s, unit="rows/s"))
    res.ratios.append(Ratio("workload-1 throughput (same run)", w1, unit="rows/s"))
    res.targets.append(Target("W6 peak RSS", peak_gib, "<=", 1.0, unit="GiB", note="" if rows >= 10_000_000 else f"{rows:,} rows, not 10M"))
    res.targets.append(Target("W6 throughput / workload-1 throughput (within 20%)", rows_per_s / w1, ">=", 0.8))
    return res
