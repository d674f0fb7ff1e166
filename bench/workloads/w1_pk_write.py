"""Workload 1: primary-key upsert write, 1M rows in 4 commits (new keys and updates, shuffled)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from bench import data
from bench.common import (
    LAKESTORE,
    PYARROW,
    PYPAIMON,
    PYPAIMON_RUST,
    Context,
    Measurement,
    Ratio,
    Target,
    WorkloadResult,
    profile_to,
    repeat,
)
from bench.lakeside import create_table, write_commits

NUMBER = 1
TITLE = "Primary-key upsert write: 1M rows in 4 commits, 3 partitions, bucket 4"
STEP = "write 4 commits"


def prepare(ctx: Context) -> None:
    """Generate the commits once per run (shared with workloads 2, 3 and 6)."""
    if "w1_commits" in ctx.shared:
        return
    commits = data.upsert_commits(data.UPSERT_PLAN, ctx.scale)
    folder = ctx.scratch("w1-input")
    ctx.shared["w1_commits"] = commits
    ctx.shared["w1_ipc"] = [str(data.write_ipc(c, folder / f"commit-{i}.arrow")) for i, c in enumerate(commits)]


def lakestore_measure(ctx: Context, reps: int) -> Measurement:
    """Time lakestore writing the commits into a fresh table per repetition; keeps the last table."""
    prepare(ctx)
    commits = ctx.shared["w1_commits"]
    warehouse = ctx.scratch("w1-lakestore")
    m, _ = repeat(LAKESTORE, reps, lambda i: create_table(warehouse, f"w1_{i}"), lambda t: write_commits(t, commits))
    ctx.shared["w1_table"] = warehouse / "bench.db" / f"w1_{reps - 1}"
    ctx.shared["w1_rows_per_s"] = sum(c.num_rows for c in commits) / m.median
    return m


def pyarrow_floor(commits: list, folder: Path, reps: int) -> Measurement:
    """The same rows written as one zstd parquet file per commit (no keys, sorting or metadata)."""

    def run(_: object) -> None:
        for i, c in enumerate(commits):
            pq.write_table(c, folder / f"commit-{i}.parquet", compression="zstd")

    m, _ = repeat(PYARROW, reps, lambda i: None, run)
    return m


def run(ctx: Context) -> WorkloadResult:
    prepare(ctx)
    res = WorkloadResult(NUMBER, TITLE)
    commits = ctx.shared["w1_commits"]
    total = sum(c.num_rows for c in commits)
    res.facts.append(("rows written", f"{total:,} in {len(commits)} commits ({', '.join(f'{c.num_rows:,}' for c in commits)})"))
    res.add(STEP, lakestore_measure(ctx, ctx.reps))
    res.add(STEP, pyarrow_floor(commits, ctx.scratch("w1-pyarrow"), ctx.reps))
    if ctx.oracle is not None:
        spec = dict(
            commits=ctx.shared["w1_ipc"],
            primary_keys=list(data.PRIMARY_KEYS),
            partition_keys=list(data.PARTITION_KEYS),
            options=data.OPTIONS,
            reps=ctx.slow_reps,
        )
        m, out = ctx.oracle.measure(PYPAIMON, "pk_write", warehouse=str(ctx.scratch("w1-pypaimon")), mode="python", **spec)
        res.add(STEP, m)
        if m is None:
            res.notes.append(f"pypaimon (python) failed: {out['error']}")
        m, out = ctx.oracle.measure(PYPAIMON_RUST, "pk_write", warehouse=str(ctx.scratch("w1-native")), mode="native", **spec)
        res.add(STEP, m)
        if m is None:
            res.notes.append(f"pypaimon + rust core failed: {out['error']}")
        elif not out.get("native_write_used"):
            res.notes.append("pypaimon fell back to its Python writer although write.native.enabled was set")
            m.note = "native writer NOT used"
        else:
            m.note = "Rust writes data files; Python commit (commit.native.enabled is REST-only)"
    else:
        res.notes.append("oracle venv missing: pypaimon peers not run")
    res.ratios.append(Ratio("lakestore throughput", ctx.shared["w1_rows_per_s"], unit="rows/s"))
    py = res.speed_ratio(STEP, PYPAIMON)
    rust = res.speed_ratio(STEP, PYPAIMON_RUST)
    floor = res.speed_ratio(STEP, PYARROW)
    res.targets += [
        Target("W1 lakestore speed vs pypaimon pure Python", py.value, ">=", 20),
        Target("W1 lakestore speed vs pypaimon + Rust core", rust.value, ">=", 2),
        Target("W1 lakestore time / pyarrow parquet write time", 1 / floor.value if floor.value else None, "<=", 2),
    ]
    if ctx.profile_dir is not None:
        warehouse = ctx.scratch("w1-profile")
        table = create_table(warehouse, "w1_profile")
        profile_to(ctx.profile_dir / "w1_pk_write.txt", lambda: write_commits(table, commits))
    return res
