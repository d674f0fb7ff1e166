"""Workload 3: read after full compaction vs ``pyarrow.parquet.read_table`` of the same files."""

from __future__ import annotations

import pyarrow.parquet as pq

import lakestore
from bench.common import LAKESTORE, PYARROW, PYPAIMON, PYPAIMON_RUST, Context, Target, WorkloadResult, repeat
from bench.lakeside import copy_table, live_file_paths, runs_per_bucket
from bench.workloads.w2_merge_read import ensure_table

NUMBER = 3
TITLE = "Read after full compaction vs pyarrow.parquet.read_table of the same files"
STEP = "full read"


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    ensure_table(ctx)
    path = copy_table(ctx.shared["w1_table"], ctx.scratch("w3"), "w3")
    lakestore.Table.from_path(str(path)).compact(full=True)
    table = lakestore.Table.from_path(str(path))
    lo, hi = runs_per_bucket(table)
    files = live_file_paths(table)
    res.facts.append(
        (
            "files per bucket after compaction",
            f"{lo}..{hi}; {len(files)} files; every split raw-convertible: {all(s.raw_convertible for s in table.scan().plan())}",
        )
    )
    m, out = repeat(LAKESTORE, ctx.reps, lambda i: None, lambda _: table.to_arrow())
    res.add(STEP, m)
    rows = {LAKESTORE: out.num_rows}
    m, out = repeat(PYARROW, ctx.reps, lambda i: None, lambda _: pq.read_table(files, partitioning=None))
    m.note = "pq.read_table(list of the live files), all columns incl. system columns"
    res.add(STEP, m)
    rows[PYARROW] = out.num_rows
    if ctx.oracle is not None:
        for label, mode in ((PYPAIMON, "python"), (PYPAIMON_RUST, "native")):
            m, out = ctx.oracle.measure(
                label, "read", table_path=str(table.path), mode=mode, reps=ctx.reps if mode == "native" else ctx.slow_reps
            )
            if m is None:
                res.notes.append(f"{label} failed: {out['error']}")
                continue
            rows[label] = out["rows"]
            if mode == "native" and not out["native_read_used"]:
                m.note = f"FELL BACK to Python: {out['fallback_reasons']}"
            res.add(STEP, m)
    if len(set(rows.values())) > 1:
        res.notes.append(f"ROW COUNT MISMATCH: {rows}")
    else:
        res.facts.append(("rows", f"{rows[LAKESTORE]:,} from every system"))
    floor = res.speed_ratio(STEP, PYARROW)
    res.speed_ratio(STEP, PYPAIMON_RUST)
    res.speed_ratio(STEP, PYPAIMON)
    res.targets.append(Target("W3 compacted read: lakestore speed vs raw pyarrow", floor.value, ">=", 0.9))
    return res
