"""Workload 9, the headline: 1M rows in 4 upsert commits (550k keys, 3 partitions, bucket 4, six
columns, a string column that differs on every row), written then read back (merge-on-read) by
each engine in its own fresh process.

Every repetition of every system is a new process (for Paimon Java a new JVM too) that loads the
input, then runs two rounds: round 1 is the first write and read in that process (what a batch
job or a CLI call pays, JIT and caches cold), round 2 repeats them in the same process (warm).
Systems are interleaved repetition by repetition, so background load spreads over all of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from bench import data
from bench.common import (
    LAKESTORE,
    PAIMON_JAVA,
    PYARROW,
    PYPAIMON,
    PYPAIMON_RUST,
    Context,
    Measurement,
    Ratio,
    Target,
    WorkloadResult,
)
from bench.java import Java, JavaRunError
from bench.oracle import OracleRunError

NUMBER = 9
TITLE = "Headline: 1M rows, 4 upsert commits, 550k keys, 3 partitions, bucket 4; write then merge-on-read, each engine in fresh processes"
WRITE = "write 4 commits, 1st run in process"
READ = "merge-on-read, 1st run in process"
WRITE_WARM = "write 4 commits, 2nd run (warm)"
READ_WARM = "merge-on-read, 2nd run (warm)"
WRITE_CPU = "write, 1st run: CPU seconds"
READ_CPU = "merge-on-read, 1st run: CPU seconds"
ROUNDS = 2
# (step, key of the child's result, round)
STEPS = (
    (WRITE, "write", 0),
    (READ, "read", 0),
    (WRITE_WARM, "write", 1),
    (READ_WARM, "read", 1),
    (WRITE_CPU, "write_cpu", 0),
    (READ_CPU, "read_cpu", 0),
)
ROOT = Path(__file__).resolve().parent.parent.parent
TABLE_SPEC = {"primary_keys": list(data.PRIMARY_KEYS), "partition_keys": list(data.PARTITION_KEYS), "options": data.OPTIONS}


def _child(mode: str, commits: list[str], warehouse: Path) -> dict[str, Any]:
    """lakestore or the pyarrow floor in a fresh interpreter of this environment."""
    spec = {"mode": mode, "commits": commits, "warehouse": str(warehouse), "rounds": ROUNDS, "spawned_at": time.time()}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "bench.headline_child", fh.name], capture_output=True, text=True, cwd=ROOT, timeout=3600
        )
    finally:
        os.unlink(fh.name)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} child failed: {proc.stderr.strip()[-2000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def _systems(ctx: Context, java: Java | None) -> dict[str, Any]:
    """label -> function(commits, warehouse) -> the child's result."""
    systems: dict[str, Any] = {
        LAKESTORE: lambda c, w: _child("lakestore", c, w),
        PYARROW: lambda c, w: _child("pyarrow", c, w),
    }
    if ctx.oracle is not None:
        for label, mode in ((PYPAIMON_RUST, "native"), (PYPAIMON, "python")):
            systems[label] = lambda c, w, mode=mode: ctx.oracle.run(
                "headline", commits=c, warehouse=str(w), mode=mode, rounds=ROUNDS, spawned_at=time.time(), **TABLE_SPEC
            )
    if java is not None:
        systems[PAIMON_JAVA] = lambda c, w: java.run("headline", commits=c, warehouse=str(w), rounds=ROUNDS, **TABLE_SPEC)
    return systems


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    commits = data.headline_commits(ctx.scale)
    folder = ctx.scratch("w9-input")
    paths = [str(data.write_ipc(c, folder / f"commit-{i}.arrow").resolve()) for i, c in enumerate(commits)]
    total = sum(c.num_rows for c in commits)
    keys = pc.count_distinct(pa.chunked_array([c.column("id") for c in commits])).as_py()
    res.facts.append(
        ("input", f"{total:,} rows in {len(commits)} commits ({', '.join(f'{c.num_rows:,}' for c in commits)}), {keys:,} keys")
    )
    res.facts.append(("columns", ", ".join(f"{f.name} {f.type}" for f in data.SCHEMA) + "; name differs on every row"))

    java = ctx.java
    if java is None:
        res.notes.append(f"Paimon Java peer not run: {Java.unavailable_reason() or 'peers disabled (--no-peers)'}")
    if ctx.oracle is None:
        res.notes.append("oracle venv missing: pypaimon peers not run")
    systems = _systems(ctx, java)
    reps = ctx.slow_reps if ctx.quick else max(3, ctx.slow_reps)
    outs: dict[str, list[dict[str, Any]]] = {label: [] for label in systems}
    failed: dict[str, str] = {}
    for rep in range(reps):
        for n, (label, fn) in enumerate(systems.items()):
            if label in failed:
                continue
            warehouse = ctx.scratch(f"w9-{n}-{rep}")
            try:
                outs[label].append(fn(paths, warehouse))
            except (RuntimeError, OracleRunError, JavaRunError, subprocess.SubprocessError) as exc:
                failed[label] = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                res.notes.append(f"{label} failed: {failed[label]}")
            ctx.scratch(f"w9-{n}-{rep}")  # free the disk space
    for label, runs in outs.items():
        if not runs:
            continue
        note = _note(label, runs, total)
        for step, key, rnd in STEPS:
            if all(key in r for r in runs):
                res.add(step, Measurement(label, [r[key][rnd] for r in runs], note=note if step == WRITE else ""))
        startup = [r["startup_s"] for r in runs if r.get("startup_s") is not None]
        if startup:
            res.facts.append(
                (f"{label}: process start-up (spawn to inputs loaded)", f"median {sorted(startup)[len(startup) // 2]:.2f} s, untimed")
            )
    _ratios(res, total)
    res.notes.append(
        f"{reps} fresh processes per system, {ROUNDS} rounds each; '1st run in process' medians include the first run "
        "(no warm-up), '2nd run (warm)' medians exclude it. Process start-up (imports, JVM) is never inside a timed section. "
        "'CPU seconds' rows: user+system CPU time of all threads of the process (for Java, of the Python driver and the JVM) "
        "in the same timed sections; a loaded machine stretches wall time far more than CPU time."
    )
    return res


def _note(label: str, runs: list[dict[str, Any]], total: int) -> str:
    rows = {r["rows"] for r in runs}
    parts = [f"read {'/'.join(f'{n:,}' for n in sorted(rows))} rows"]
    if label == PYARROW:
        parts.append(f"pq.write_table zstd per commit; read = all {total:,} rows, no merge")
    if label == PYPAIMON_RUST:
        if all(r.get("native_write_used") for r in runs):
            parts.append("Rust writes data files, Python commits")
        else:
            parts.append("native writer NOT used")
        if not all(r.get("native_read_used") for r in runs):
            parts.append(f"native read FELL BACK: {runs[-1].get('fallback_reasons')}")
    if label == PAIMON_JAVA:
        parts.append("Arrow crosses py4j as IPC bytes")
    return "; ".join(parts)


def _ratios(res: WorkloadResult, total: int) -> None:
    writers, readers = (PYPAIMON_RUST, PYARROW, PAIMON_JAVA, PYPAIMON), (PYPAIMON_RUST, PAIMON_JAVA, PYPAIMON, PYARROW)
    for step, peers in ((WRITE, writers), (READ, readers), (WRITE_CPU, writers), (READ_CPU, readers)):
        mine = res.median(step, LAKESTORE)
        if mine and step in (WRITE, READ):
            res.ratios.append(Ratio(f"{step}: lakestore throughput", total / mine, unit="rows/s"))
        for peer in peers:
            theirs = res.median(step, peer)
            value = mine / theirs if mine and theirs else None
            res.ratios.append(Ratio(f"{step}: lakestore time / {peer} time", value))
    write_rust, read_rust = res.median(WRITE, PYPAIMON_RUST), res.median(READ, PYPAIMON_RUST)
    write_floor, write_me, read_me = res.median(WRITE, PYARROW), res.median(WRITE, LAKESTORE), res.median(READ, LAKESTORE)
    res.targets += [
        Target("W9 headline write: lakestore speed vs Rust core", write_rust / write_me if write_rust and write_me else None, ">=", 2),
        Target("W9 headline read: lakestore speed vs Rust core", read_rust / read_me if read_rust and read_me else None, ">=", 1.5),
        Target(
            "W9 headline write: lakestore time / pq.write_table time",
            write_me / write_floor if write_floor and write_me else None,
            "<=",
            1.5,
        ),
    ]
