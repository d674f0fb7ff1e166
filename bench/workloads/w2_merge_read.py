"""Workload 2: merge-on-read of the workload-1 table (4 level-0 runs per bucket), full and
filtered/projected. Every system reads the SAME table files (written by lakestore)."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq

import lakestore
from bench.common import (
    LAKESTORE,
    PYARROW,
    PYPAIMON,
    PYPAIMON_RUST,
    Context,
    Measurement,
    Target,
    WorkloadResult,
    profile_to,
    repeat,
)
from bench.lakeside import live_file_paths, runs_per_bucket
from bench.workloads import w1_pk_write

NUMBER = 2
TITLE = "Merge-on-read of the workload-1 table (4 level-0 runs per bucket)"
FULL = "full merge read"
FILTERED = "filtered + projected read"
FIRST = "first full merge read in a fresh process"
FILTER_DT = "2024-01-02"
PROJECTION = ["id", "value"]


def ensure_table(ctx: Context) -> lakestore.Table:
    if "w1_table" not in ctx.shared:
        w1_pk_write.lakestore_measure(ctx, 1)
    return lakestore.Table.from_path(str(ctx.shared["w1_table"]))


def _id_bound(table: lakestore.Table) -> int:
    ids = table.to_arrow(columns=["id"]).column("id").to_numpy()
    return int(sorted(ids)[len(ids) // 2])


def _child_read(table_path: str, engine: str) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-m", "bench.workloads.w2_child", table_path, engine], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return float(result["seconds"]), int(result["rows"])


def first_reads(ctx: Context, res: WorkloadResult, rows: dict[tuple[str, str], int]) -> None:
    """Each system's first read in a new process, repetitions interleaved (same load for all)."""
    table_path = str(ctx.shared["w1_table"])
    times: dict[str, list[float]] = {LAKESTORE: [], PYARROW: [], PYPAIMON_RUST: []}
    for _ in range(ctx.reps):
        for engine, label in (("lakestore", LAKESTORE), ("pyarrow", PYARROW)):
            seconds, n = _child_read(table_path, engine)
            times[label].append(seconds)
            if label == LAKESTORE:
                rows[(FIRST, label)] = n  # pyarrow returns every run's rows (no merge)
        if ctx.oracle is not None:
            m, out = ctx.oracle.measure(PYPAIMON_RUST, "read", table_path=table_path, mode="native", reps=1)
            if m is None:
                res.notes.append(f"{PYPAIMON_RUST} {FIRST} failed: {out['error']}")
                continue
            times[PYPAIMON_RUST].extend(m.times)
            rows[(FIRST, PYPAIMON_RUST)] = out["rows"]
    res.add(FIRST, Measurement(LAKESTORE, times[LAKESTORE], "imports and the table open before the clock, as for the peers"))
    res.add(FIRST, Measurement(PYARROW, times[PYARROW], "pq.read_table of all runs, no merge; its first call imports pyarrow.dataset"))
    if times[PYPAIMON_RUST]:
        res.add(FIRST, Measurement(PYPAIMON_RUST, times[PYPAIMON_RUST], "one read per oracle process (read.native.enabled)"))


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    table = ensure_table(ctx)
    lo, hi = runs_per_bucket(table)
    res.facts.append(("sorted runs per bucket", f"{lo}..{hi} (all level 0)"))
    bound = _id_bound(table)
    predicate = (lakestore.col("dt") == FILTER_DT) & (lakestore.col("id") < bound)
    res.facts.append(("filter / projection", f"dt = '{FILTER_DT}' AND id < {bound} / {PROJECTION}"))

    rows: dict[tuple[str, str], int] = {}
    m, out = repeat(LAKESTORE, ctx.reps, lambda i: None, lambda _: table.to_arrow())
    res.add(FULL, m)
    rows[(FULL, LAKESTORE)] = out.num_rows
    m, out = repeat(LAKESTORE, ctx.reps, lambda i: None, lambda _: table.to_arrow(columns=PROJECTION, filter=predicate))
    res.add(FILTERED, m)
    rows[(FILTERED, LAKESTORE)] = out.num_rows

    first_reads(ctx, res, rows)

    files = live_file_paths(table)
    m, out = repeat(PYARROW, ctx.reps, lambda i: None, lambda _: pq.read_table(files, partitioning=None))
    m.note = "reads all runs of the same files, no merge (not a like-for-like floor)"
    res.add(FULL, m)

    if ctx.oracle is not None:
        filters = [["equal", "dt", FILTER_DT], ["less_than", "id", bound]]
        for label, mode in ((PYPAIMON, "python"), (PYPAIMON_RUST, "native")):
            for step, extra in ((FULL, {}), (FILTERED, {"projection": PROJECTION, "filter": filters})):
                m, out = ctx.oracle.measure(
                    label,
                    "read",
                    table_path=str(ctx.shared["w1_table"]),
                    mode=mode,
                    reps=ctx.reps if mode == "native" else ctx.slow_reps,
                    **extra,
                )
                if m is None:
                    res.notes.append(f"{label} {step} failed: {out['error']}")
                    continue
                rows[(step, label)] = out["rows"]
                if mode == "native":
                    m.note = (
                        "read.native.enabled: Rust plans and reads"
                        if out["native_read_used"]
                        else f"FELL BACK to Python: {out['fallback_reasons']}"
                    )
                res.add(step, m)
    else:
        res.notes.append("oracle venv missing: pypaimon peers not run")

    for step in (FULL, FILTERED, FIRST):
        counts = {label: n for (s, label), n in rows.items() if s == step}
        if len(set(counts.values())) > 1:
            res.notes.append(f"ROW COUNT MISMATCH on {step}: {counts}")
        else:
            res.facts.append((f"rows returned ({step})", f"{next(iter(counts.values())):,} by every system"))
    full_rust = res.speed_ratio(FULL, PYPAIMON_RUST)
    res.speed_ratio(FULL, PYPAIMON)
    res.speed_ratio(FILTERED, PYPAIMON_RUST)
    res.speed_ratio(FILTERED, PYPAIMON)
    res.speed_ratio(FULL, PYARROW, description=f"{FULL}: lakestore speed vs raw pyarrow read of all runs (no merge)")
    first_rust = res.speed_ratio(FIRST, PYPAIMON_RUST)
    res.speed_ratio(FIRST, PYARROW, description=f"{FIRST}: lakestore speed vs raw pyarrow read of all runs (no merge)")
    res.targets.append(Target("W2 lakestore merge read speed vs pypaimon + Rust core (same process)", full_rust.value, ">=", 1.2))
    res.targets.append(Target("W2 lakestore first merge read in a fresh process vs pypaimon + Rust core", first_rust.value, ">=", 1.5))
    if ctx.profile_dir is not None:
        profile_to(ctx.profile_dir / "w2_merge_read.txt", table.to_arrow)
        # pyinstrument samples the calling thread only: read the splits sequentially too.
        reader, splits = table.store.split_reader(), table.scan().plan()
        names = table.schema.field_names
        profile_to(ctx.profile_dir / "w2_merge_read_splits_sequential.txt", lambda: [reader.read(s, names, None) for s in splits])
    return res
