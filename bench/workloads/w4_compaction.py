"""Workload 4: full compaction of 1M rows written as 5 runs per bucket; and the peak memory of
a full compaction of one bucket of 10M rows (child processes, ru_maxrss)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import lakestore
from bench import data
from bench.common import LAKESTORE, PYARROW, Context, Target, WorkloadResult, profile_to, repeat
from bench.lakeside import create_table, file_path, runs_per_bucket, write_commits

NUMBER = 4
TITLE = "Full compaction of 1M rows in 5 runs per bucket"
STEP = "full compaction"
ONE_BUCKET_ROWS = 10_000_000
RSS_LIMIT_GIB = 1.0


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    warehouse = ctx.scratch("w4-template")
    # A high trigger keeps the 5 runs apart if writes compact automatically (write-only=false).
    template = create_table(warehouse, "w4", {**data.OPTIONS, "num-sorted-run.compaction-trigger": "10"})
    commits = data.upsert_commits(data.COMPACTION_PLAN, ctx.scale, seed=4)
    write_commits(template, commits)
    lo, hi = runs_per_bucket(template)
    res.facts.append(("input", f"{sum(c.num_rows for c in commits):,} rows in {len(commits)} commits; {lo}..{hi} runs per bucket"))
    work = ctx.scratch("w4-work")

    def setup(i: int) -> lakestore.Table:
        dest = work / f"w4_{i}"
        shutil.copytree(template.path, dest)
        return lakestore.Table.from_path(str(dest))

    def compact(table: lakestore.Table) -> lakestore.Table:
        table.compact(full=True)
        return table

    m, table = repeat(LAKESTORE, ctx.reps, setup, compact)
    res.add(STEP, m)
    table = lakestore.Table.from_path(table.path)
    lo, hi = runs_per_bucket(table)
    res.facts.append(("after", f"{lo}..{hi} files per bucket, {table.latest_snapshot().total_record_count:,} rows"))
    groups = _files_by_bucket(template)
    out_dir = ctx.scratch("w4-pyarrow")
    m, _ = repeat(PYARROW, ctx.reps, lambda i: None, lambda _: _pyarrow_compaction(groups, out_dir))
    m.note = "floor: read each bucket's runs, sort by key+sequence, keep last, write one zstd file"
    res.add(STEP, m)
    res.speed_ratio(STEP, PYARROW)
    res.notes.append(
        "pypaimon 2.1.0 (Python and Rust core) exposes no compaction, so the only peer is the pyarrow floor; no target is set here"
    )
    if ctx.profile_dir is not None:
        t = setup(ctx.reps)
        profile_to(ctx.profile_dir / "w4_compaction.txt", lambda: compact(t))
    _one_bucket_memory(ctx, res)
    return res


def _child(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "bench.workloads.w4_child", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit {proc.returncode}")
    return proc.stdout.strip().splitlines()[-1]


def _one_bucket_memory(ctx: Context, res: WorkloadResult) -> None:
    """Peak RSS of a full compaction of one bucket (5 overlapping runs), in its own process."""
    rows = ctx.rows(ONE_BUCKET_ROWS)
    try:
        path = _child("setup", str(ctx.scratch("w4-one-bucket")), str(rows))
        out = json.loads(_child("compact", path))
    except RuntimeError as exc:
        res.notes.append(f"one-bucket memory measurement failed: {exc}")
        return
    peak_gib = out["peak_rss_kib"] / 1024 / 1024
    res.facts.append(
        (
            "one bucket, full compaction (child process)",
            f"{rows:,} rows in 5 runs -> {out['rows']:,} rows in {out['files']} files in {out['seconds']:.1f} s;"
            f" peak RSS {peak_gib * 1024:.0f} MiB (baseline {out['baseline_rss_kib'] / 1024:.0f} MiB)",
        )
    )
    res.targets.append(
        Target(
            f"W4 peak RSS of a full compaction of one {rows:,}-row bucket",
            peak_gib,
            "<=",
            RSS_LIMIT_GIB,
            unit="GiB",
            note="" if rows >= ONE_BUCKET_ROWS else f"quick run: {rows:,} rows, not {ONE_BUCKET_ROWS:,}",
        )
    )


def _files_by_bucket(table: lakestore.Table) -> list[list[str]]:
    reader = table.store.split_reader()
    return [[file_path(reader, s, f) for f in s.files] for s in table.scan().plan()]


def _pyarrow_compaction(groups: list[list[str]], out_dir: Path) -> None:
    for i, files in enumerate(groups):
        rows = pa.concat_tables([pq.read_table(f) for f in files])
        order = pc.sort_indices(rows, [("_KEY_id", "ascending"), ("_SEQUENCE_NUMBER", "ascending")])
        rows = rows.take(order)
        keys = rows.column("_KEY_id").to_numpy()
        last = np.append(keys[1:] != keys[:-1], True)
        pq.write_table(rows.filter(pa.array(last)), out_dir / f"bucket-{i}.parquet", compression="zstd")
