"""lakestore's Spark path against Apache Paimon's own Spark connector (paimon-spark 2.0.0), the
peer of issue 32 part 2: the same parquet input, the same table layout and options, local[2], a
fresh Spark session (a fresh process, ``bench.spark_peer_child``) per system, group of steps and
repetition, the systems' order rotated each repetition.

    .venv/bin/python -m bench.spark_peer --rows 1000000 --reps 3          # the 1M-row table
    .venv/bin/python -m bench.spark_peer --rows 10000000 --reps 1 --groups pk-fixed-write,pk-dynamic-write
    .venv/bin/python -m bench.spark_peer --rows 20000 --reps 1            # a smoke run (~3 min)

Systems: paimon-spark on pyspark 4.0.5 (``.venv-spark40``; the connector does not run on later
Spark), lakestore on pyspark 4.3 (``.venv``) and on pyspark 4.0.5 (``.venv-spark40``, lakestore
from this checkout on PYTHONPATH: its dependencies must be installed there), plus any
``--lakestore-python LABEL=PYTHON`` (e.g. a pyspark 4.1 venv). A system that fails records its
error (the row shows it) and is not run again for that group. Where a pyspark lacks what a step
uses (``lakestore.spark.compat``), lakestore runs it the way that version offers and the report
lists it: on 4.0 the pushdown query is Spark's WHERE without pushdown (no filter pushdown into
Python data sources) and the stream writes each micro-batch with ``foreachBatch`` +
``write_dataframe`` (no Arrow stream writer).

Groups (each one child process per system and repetition; see ``bench.spark_peer_child``):
``pk-fixed`` / ``pk-dynamic`` (bucket 4 / -1): upsert write A, upsert write B (half of its keys
overlap A), merge-on-read of the result (count + checksums of every column), a filtered read
``part = X AND k = Y`` (lakestore: ``read_dataframe(filter=...)``, and Spark's WHERE with filter
pushdown, then that query once more), full compaction, a read after it; ``append``: write A into an append table;
``stream``: the 20 parquet files of A read by ``readStream`` (``maxFilesPerTrigger`` 1,
``trigger(availableNow=True)``) and written by 20 micro-batches into a bucket-4 primary-key
table; ``pk-fixed-write`` / ``pk-dynamic-write``: write A only (the 10M-row rows).

The connector jar is ``../shared/jars/paimon-spark-4.0_2.13-2.0.0.jar`` beside the repository
(``LAKESTORE_PAIMON_SPARK_JAR`` overrides it). ``--report bench/REPORT-spark.md`` rewrites one
results section of that file (between its ``spark-peer results <--report-section>`` markers)
and leaves the rest. The lakestore measured is ``git archive`` of ``--lakestore-commit``
(default HEAD): the checkout is shared, and others' uncommitted edits must not be measured."""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.spark_peer_child import GROUPS, RESULT_PREFIX

ROOT = Path(__file__).resolve().parent.parent
JAR_NAME = "paimon-spark-4.0_2.13-2.0.0.jar"
PEER = "paimon-spark"
MAIN = "lakestore 4.3"
STREAM_FILES = 20
PARTS = 4
INPUT_VERSION = 1  # bump when the generated rows change (cached inputs are regenerated)
# Spark settings of every session, both systems (lakestore.spark.spark_settings' local choices).
CONF = {
    "master": "local[2]",
    "spark.driver.memory": "2g",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}
# Report rows: (row id, description, group, step).
ROWS = (
    ("a", "PK upsert write, bucket 4 (write A into an empty table)", "pk-fixed", "write_a"),
    ("a", "PK upsert write, bucket 4 (write A into an empty table)", "pk-fixed-write", "write_a"),
    ("a", "PK upsert write, dynamic bucket (write A)", "pk-dynamic", "write_a"),
    ("a", "PK upsert write, dynamic bucket (write A)", "pk-dynamic-write", "write_a"),
    ("a'", "second upsert write, bucket 4 (B: half its keys update A's)", "pk-fixed", "write_b"),
    ("a'", "second upsert write, dynamic bucket (B)", "pk-dynamic", "write_b"),
    ("b", "merge-on-read after A+B, bucket 4 (count + checksums of all columns)", "pk-fixed", "read_merge"),
    ("b", "merge-on-read after A+B, dynamic bucket", "pk-dynamic", "read_merge"),
    ("c", "full compaction, bucket 4", "pk-fixed", "compact"),
    ("c", "full compaction, dynamic bucket", "pk-dynamic", "compact"),
    ("c'", "full read after compaction, bucket 4", "pk-fixed", "read_compacted"),
    ("c'", "full read after compaction, dynamic bucket", "pk-dynamic", "read_compacted"),
    ("d", "filtered read part = X AND k = Y, bucket 4 (lakestore: read_dataframe(filter=))", "pk-fixed", "read_filter"),
    ("d'", "filtered read, bucket 4 (lakestore: WHERE + filter pushdown)", "pk-fixed", "read_filter_sql"),
    ("d''", "the same WHERE query again, bucket 4 (the session's pushdown planner warm)", "pk-fixed", "read_filter_again"),
    ("d", "filtered read part = X AND k = Y, dynamic bucket (read_dataframe(filter=))", "pk-dynamic", "read_filter"),
    ("d'", "filtered read, dynamic bucket (WHERE + filter pushdown)", "pk-dynamic", "read_filter_sql"),
    ("d''", "the same WHERE query again, dynamic bucket", "pk-dynamic", "read_filter_again"),
    ("e", "append write (no primary key, bucket-unaware)", "append", "write_a"),
    ("f", f"stream: {STREAM_FILES} micro-batches of parquet files into a bucket-4 PK table", "stream", "stream"),
)


# -- input ------------------------------------------------------------------------------------------
def _rows(keys: np.ndarray, version: int, rng: np.random.Generator) -> pa.Table:
    n = len(keys)
    part = pc.take(pa.array([f"p{i}" for i in range(PARTS)]), pa.array(keys % PARTS))
    s1 = pc.binary_join_element_wise(
        pa.scalar("name-"), pc.cast(pa.array(keys % 100_003), pa.string()), pa.scalar(f"-v{version}"), pa.scalar("")
    )
    s2 = pc.cast(pa.array(rng.integers(0, 1 << 62, n)), pa.string())
    return pa.table(
        {
            "k": pa.array(keys, pa.int64()),
            "part": part,
            "i32": pa.array(((keys % 100_000) * 10 + version).astype(np.int32)),
            "i64": pa.array(rng.integers(0, 1_000_000_000, n)),
            "d1": pa.array(rng.random(n)),
            "d2": pa.array(rng.normal(size=n)),
            "s1": s1,
            "s2": s2,
        }
    )


def make_inputs(rows: int, folder: Path) -> dict[str, Any]:
    """A: keys 0..rows-1, B: keys rows/2..3*rows/2-1 (half update A's keys), both shuffled; the
    stream input is A in 20 files. Cached in ``folder`` (written once, reused by later runs)."""
    done = folder / "inputs.json"
    if done.exists():
        info = json.loads(done.read_text())
        if info.get("version") == INPUT_VERSION and info.get("rows") == rows:
            return info
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "stream").mkdir(parents=True)
    rng = np.random.default_rng(32)
    a = _rows(rng.permutation(rows).astype(np.int64), 1, rng)
    b = _rows(rng.permutation(rows).astype(np.int64) + rows // 2, 2, rng)
    group = min(131_072, max(1, rows // 8))
    pq.write_table(a, folder / "a.parquet", compression="zstd", row_group_size=group)
    pq.write_table(b, folder / "b.parquet", compression="zstd", row_group_size=group)
    step = math.ceil(rows / STREAM_FILES)
    for i in range(STREAM_FILES):
        pq.write_table(a.slice(i * step, step), folder / "stream" / f"part-{i:02d}.parquet", compression="zstd")
    # expected results: B's rows win for the keys it shares with A
    a_only = a.filter(pc.less(a["k"], rows // 2))
    merged_sum = pc.sum(a_only["i64"]).as_py() + pc.sum(b["i64"]).as_py()
    # the filtered key: in the overlap (B's version is the live one), in partition p1
    key = rows // 2 + ((1 - rows // 2) % PARTS)
    while key >= rows:
        key -= PARTS
    hit = b.filter(pc.equal(b["k"], key)).to_pylist()[0]
    info = {
        "version": INPUT_VERSION,
        "rows": rows,
        "inputs": {"a": str(folder / "a.parquet"), "b": str(folder / "b.parquet"), "stream": str(folder / "stream")},
        "filter": {"part": hit["part"], "k": key},
        "expected": {
            "a": {"rows": rows, "sum_i64": pc.sum(a["i64"]).as_py()},
            "merged": {"rows": rows + rows - rows // 2, "sum_i64": merged_sum},
            "filter_row": [hit[c] for c in ("k", "part", "i32", "i64", "d1", "d2", "s1", "s2")],
        },
    }
    done.write_text(json.dumps(info))
    return info


# -- children ---------------------------------------------------------------------------------------
def paimon_spark_jar() -> Path:
    default = ROOT.parent / "shared" / "jars" / JAR_NAME  # ../shared/jars beside the repository
    return Path(os.environ.get("LAKESTORE_PAIMON_SPARK_JAR", default)).resolve()


def lakestore_source(rev: str, workdir: Path, paths: tuple[str, ...] = ("lakestore",)) -> tuple[Path, str]:
    """The directory the children run from (their cwd, and PYTHONPATH for lakestore's): a
    ``git archive`` of ``paths`` (``lakestore/``; bench.sf10 adds the pipeline's packages) at ``rev``
    with this checkout's ``bench/`` beside it, so that
    others' uncommitted edits in the shared checkout never reach a measurement; ``worktree``
    runs the checkout itself."""
    if rev == "worktree":
        dirty = subprocess.run(["git", "status", "--porcelain", "lakestore"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return ROOT, f"{head} + the working tree" + (" (uncommitted changes in lakestore/)" if dirty else "")
    sha = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    dest = workdir / f"src-{sha[:10]}"
    if not all((dest / path).exists() for path in paths):
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", sha, *paths], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    shutil.rmtree(dest / "bench", ignore_errors=True)
    shutil.copytree(ROOT / "bench", dest / "bench", ignore=shutil.ignore_patterns("__pycache__", "*.md", "profiles"))
    return dest, sha[:10]


def run_child(
    python: str, spec: dict[str, Any], workdir: Path, *, lakestore_path: bool, timeout: float, src: Path = ROOT
) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "workdir": str(workdir), "conf": {**spec["conf"], "spark.local.dir": str(workdir / "spark-local")}}
    (workdir / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ)
    env.update({"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": python, "TZ": "UTC", "TMPDIR": str(workdir)})
    if lakestore_path:  # lakestore and bench from ``src`` (the Python workers import lakestore too)
        env["PYTHONPATH"] = str(src)
    else:
        env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    with open(workdir / "stderr.log", "wb") as err:
        try:
            proc = subprocess.run(
                [python, "-m", "bench.spark_peer_child", str(workdir / "spec.json")],
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=src,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s", "steps": {}, "checks": {}, "facts": {}}
    lines = [ln for ln in proc.stdout.decode(errors="replace").splitlines() if ln.startswith(RESULT_PREFIX)]
    if not lines:
        tail = (workdir / "stderr.log").read_text(errors="replace")[-3000:]
        return {"error": f"child exited {proc.returncode} without a result: {tail}", "steps": {}, "checks": {}, "facts": {}}
    out = json.loads(lines[-1][len(RESULT_PREFIX) :])
    out["process_seconds"] = time.perf_counter() - start
    return out


# -- checks and the report --------------------------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def verify(results: dict[str, Any], info: dict[str, Any]) -> list[str]:
    """Problems: a check that differs between systems or repetitions, or from the expected rows."""
    problems = []
    expected = info["expected"]
    for group, by_system in results.items():
        reference: dict[str, tuple[str, Any]] = {}
        for label, runs in by_system.items():
            for run in runs:
                for name, value in run.get("checks", {}).items():
                    if name not in reference:
                        reference[name] = (label, value)
                    elif not _same(reference[name][1], value):
                        problems.append(f"{group}/{name}: {label} {value} != {reference[name][0]} {reference[name][1]}")
                    want = None
                    if name in ("read_merge", "read_compacted"):
                        want = expected["merged"]
                    elif name == "written":
                        want = expected["a"]
                    if want and (value["rows"] != want["rows"] or value["sum_i64"] != want["sum_i64"]):
                        problems.append(f"{group}/{name}: {label} {value} != expected {want}")
                    if name in ("read_filter", "read_filter_sql", "read_filter_again") and not _same(value, [expected["filter_row"]]):
                        problems.append(f"{group}/{name}: {label} {value} != expected {[expected['filter_row']]}")
                mb = run.get("facts", {}).get("micro_batches")
                if mb is not None and mb != STREAM_FILES:
                    problems.append(f"{group}: {label} ran {mb} micro-batches, not {STREAM_FILES}")
    return problems


def _median(runs: list[dict[str, Any]], step: str, key: str = "seconds") -> float | None:
    values = [r["steps"][step][key] for r in runs if step in r.get("steps", {})]
    return statistics.median(values) if values else None


def _error(runs: list[dict[str, Any]]) -> str | None:
    errors = [r["error"] for r in runs if r.get("error")]
    return errors[0] if errors else None


def _cell(runs: list[dict[str, Any]], step: str) -> str:
    value = _median(runs, step)
    if value is not None:
        return f"{value:.2f}"
    error = _error(runs)
    return f"fails: {error.split(':', 1)[0]} (below)" if error else "-"


def table_markdown(all_results: dict[int, dict[str, Any]], labels: list[str]) -> list[str]:
    extra = [lb for lb in labels if lb not in (PEER, MAIN)]
    head = [
        "row",
        "rows",
        PEER + " s",
        MAIN + " s",
        *[lb + " s" for lb in extra],
        "ratio (4.3 / peer)",
        "goal <= 1",
        "CPU ratio",
        "load (1-min, at the step)",
        "n",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rows, results in sorted(all_results.items()):
        for rid, desc, group, step in ROWS:
            by_system = results.get(group)
            if not by_system or not any(step in r.get("steps", {}) for runs in by_system.values() for r in runs):
                continue
            peer, main = by_system.get(PEER, []), by_system.get(MAIN, [])
            p, m = _median(peer, step), _median(main, step)
            pc_, mc = _median(peer, step, "cpu"), _median(main, step, "cpu")
            ratio = m / p if p and m else None
            loads = [r["steps"][step]["load"] for runs in by_system.values() for r in runs if step in r.get("steps", {})]
            n = min(
                (len([r for r in runs if step in r.get("steps", {})]) for lb, runs in by_system.items() if lb in (PEER, MAIN)), default=0
            )
            cells = [
                f"{rid}. {desc}",
                f"{rows / 1e6:g}M",
                _cell(peer, step),
                _cell(main, step),
                *[_cell(by_system.get(lb, []), step) for lb in extra],
                "n/a" if ratio is None else f"{ratio:.2f}",
                "n/a" if ratio is None else ("met" if ratio <= 1.0 else "missed"),
                "n/a" if not (pc_ and mc) else f"{mc / pc_:.2f}",
                f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-",
                str(n),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def variants_markdown(all_results: dict[int, dict[str, Any]], labels: list[str]) -> list[str]:
    """Steps a system ran another way, its pyspark lacking what they use (lakestore.spark.compat)."""
    found = {
        (label, step, how)
        for results in all_results.values()
        for by in results.values()
        for label, runs in by.items()
        for r in runs
        for step, how in r.get("facts", {}).get("variants", {}).items()
    }
    if not found:
        return []
    lines = ["Steps run another way (the pyspark lacks what the step uses elsewhere):", ""]
    lines += [f"- {label}, {step}: {how}" for label, step, how in sorted(found, key=lambda x: (labels.index(x[0]), x[1]))]
    return [*lines, ""]


def report_markdown(
    all_results: dict[int, dict[str, Any]], infos: dict[int, dict[str, Any]], labels: list[str], meta: dict[str, Any]
) -> str:
    out = [
        f"Generated {meta['when']} by `{meta['command']}` in {meta['seconds']:.0f} s (lakestore {meta['lakestore']});"
        f" load average at start "
        f"{meta['load_start']}, at end {meta['load_end']}. Medians of {meta['reps']} fresh processes per system"
        " (order rotated each repetition); seconds on the driver around the step's Spark action. Ratio ="
        f" {MAIN} median / {PEER} median (< 1: lakestore faster). CPU ratio: the same for the CPU seconds"
        " of each child's whole process tree (driver, JVM, Python workers) during the step.",
        "",
        *table_markdown(all_results, labels),
        "",
        *variants_markdown(all_results, labels),
        "Warm-up (not in the rows above; the first jobs of each fresh session: a 1,000-row write plus a"
        " full read of it, JIT and Python-worker start-up included), median seconds over all groups:",
        "",
    ]
    for rows, results in sorted(all_results.items()):
        parts = []
        for label in labels:
            runs = [r for group in results.values() for r in group.get(label, [])]
            value = _median(runs, "warmup")
            start = statistics.median([r["session_seconds"] for r in runs if "session_seconds" in r] or [float("nan")])
            if value is not None:
                parts.append(f"{label} {value:.2f} s (session start {start:.1f} s)")
        out.append(f"- {rows / 1e6:g}M rows: " + "; ".join(parts))
    out += ["", "Correctness (checked by the harness on every run):", ""]
    for rows, results in sorted(all_results.items()):
        problems = verify(results, infos[rows])
        exp = infos[rows]["expected"]
        names = {n for by in results.values() for runs in by.values() for r in runs for n in r.get("checks", {})}
        if not names:
            out.append(f"- {rows / 1e6:g}M rows: no check ran")
            continue
        what = []
        if names & {"read_merge", "read_compacted"}:
            what.append(f"merge-on-read and the read after compaction: {exp['merged']['rows']:,} rows")
        if "written" in names:
            what.append(f"the written rows read back: {exp['a']['rows']:,}")
        if names & {"read_filter", "read_filter_sql", "read_filter_again"}:
            what.append("the filtered reads: B's row")
        if any(r.get("facts", {}).get("micro_batches") for by in results.values() for runs in by.values() for r in runs):
            what.append(f"the stream: {STREAM_FILES} micro-batches")
        out.append(
            f"- {rows / 1e6:g}M rows: "
            + (
                "**MISMATCH**: " + "; ".join(problems)
                if problems
                else "every system returned the same count, bit_xor(xxhash64(all columns)), sum(i64) and sum(d1),"
                " equal to the expected count and sum(i64) (" + "; ".join(what) + ")"
            )
        )
    out += ["", "What each step left in the table (last repetition; snapshot kinds, data files on disk):", ""]
    for rows, results in sorted(all_results.items()):
        for group, by_system in results.items():
            for label, runs in by_system.items():
                facts = runs[-1].get("facts", {}) if runs else {}
                states = [f"{k[6:]}: {v.get('kinds')}, {v.get('data_files')} files" for k, v in facts.items() if k.startswith("after_")]
                if states:
                    out.append(f"- {rows / 1e6:g}M {group}, {label}: " + "; ".join(states))
    errors = sorted(
        {(label, _error(runs)) for results in all_results.values() for by in results.values() for label, runs in by.items() if _error(runs)}
    )
    if errors:
        out += ["", "Failures:", ""]
        for label, err in errors:
            out.append(f"- {label}: `{err.splitlines()[0][:600]}`")
    versions = sorted(
        {
            (label, r.get("pyspark"), r.get("python"))
            for res in all_results.values()
            for by in res.values()
            for label, runs in by.items()
            for r in runs
            if r.get("pyspark")
        }
    )
    out += ["", "Interpreters: " + "; ".join(f"{lb}: pyspark {v} ({Path(p).parent.parent.name if p else '?'})" for lb, v, p in versions)]
    return "\n".join(out) + "\n"


def write_report(path: Path, body: str, section: str) -> None:
    """Replace the text between this section's markers (appended when missing)."""
    BEGIN, END = f"<!-- spark-peer results {section}: begin -->", f"<!-- spark-peer results {section}: end -->"
    text = path.read_text() if path.exists() else "# lakestore on Spark vs paimon-spark\n"
    if BEGIN not in text or END not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{body}{END}{tail}")


# -- main -------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.spark_peer", description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, action="append", help="rows of each input (repeatable; default 1000000)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--groups", default="pk-fixed,pk-dynamic,append,stream", help=f"comma-separated, of {', '.join(GROUPS)}")
    p.add_argument("--peer-python", default=str(ROOT / ".venv-spark40" / "bin" / "python"))
    p.add_argument(
        "--lakestore-python",
        action="append",
        default=[],
        metavar="LABEL=PYTHON",
        help="more lakestore systems (default: 'lakestore 4.3' = this interpreter, 'lakestore 4.0.5' = .venv-spark40)",
    )
    p.add_argument("--no-default-systems", action="store_true", help="only paimon-spark and the --lakestore-python systems")
    p.add_argument("--system-reps", action="append", default=[], metavar="LABEL=N", help="at most N repetitions of that system")
    p.add_argument("--only", default="", help="comma-separated system labels to run (default: all)")
    p.add_argument(
        "--lakestore-commit", default="HEAD", help="the lakestore measured: a git revision (archived into WORKDIR) or 'worktree'"
    )
    p.add_argument("--workdir", type=Path, default=ROOT / ".tmp" / "spark-peer", help="inputs (cached) and the children's scratch")
    p.add_argument("--keep", action="store_true", help="keep each child's warehouse and logs")
    p.add_argument(
        "--profile",
        action="store_true",
        help="Spark's event log in every child, lakestore's source instrumented (bench.spark_peer_profile)",
    )
    p.add_argument("--report", type=Path, default=None, help="rewrite the results section of this markdown file")
    p.add_argument("--report-section", default="main", help="which marked section of --report this run rewrites")
    p.add_argument("--json", type=Path, default=None, help="write the raw results here (default: WORKDIR/results-<time>.json)")
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--render", type=Path, default=None, help="only rewrite the report section from a saved --json file")
    return p.parse_args(argv)


def render(path: Path, args: argparse.Namespace) -> int:
    """Rewrite the report section from a saved ``--json`` file (no Spark run)."""
    saved = json.loads(path.read_text())
    infos = {int(k): v for k, v in saved["infos"].items()}
    results = {int(k): v for k, v in saved["results"].items()}
    labels = list(dict.fromkeys(lb for res in results.values() for by in res.values() for lb in by))
    body = report_markdown(results, infos, labels, saved["meta"])
    print(body)
    if args.report:
        write_report(args.report, body, args.report_section)
    return 1 if any(verify(results[rows], infos[rows]) for rows in results) else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render:
        return render(args.render, args)
    sizes = args.rows or [1_000_000]
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise SystemExit(f"unknown groups {unknown}; known: {list(GROUPS)}")
    jar = paimon_spark_jar()
    systems: list[tuple[str, str, str]] = []  # label, python, child system
    if Path(args.peer_python).exists() and jar.exists():
        systems.append((PEER, args.peer_python, "paimon-spark"))
    else:
        print(f"paimon-spark skipped: {args.peer_python} or {jar} missing", file=sys.stderr)
    if not args.no_default_systems:
        systems.append((MAIN, sys.executable, "lakestore"))
        systems.append(("lakestore 4.0.5", str(ROOT / ".venv-spark40" / "bin" / "python"), "lakestore"))
    for item in args.lakestore_python:
        label, _, python = item.partition("=")
        systems.append((label.strip(), str(Path(python).absolute()), "lakestore"))
    if args.only:
        wanted = {s.strip() for s in args.only.split(",")}
        systems = [s for s in systems if s[0] in wanted]
    labels = [s[0] for s in systems]
    args.workdir = args.workdir.resolve()
    started, load_start = time.perf_counter(), " / ".join(f"{x:.2f}" for x in os.getloadavg())
    args.workdir.mkdir(parents=True, exist_ok=True)
    src, lakestore_rev = lakestore_source(args.lakestore_commit, args.workdir)
    infos = {rows: make_inputs(rows, args.workdir / f"input-{rows}") for rows in sizes}
    print(f"inputs ready in {time.perf_counter() - started:.1f} s; systems {labels}; groups {groups}", flush=True)
    all_results: dict[int, dict[str, dict[str, list[dict[str, Any]]]]] = {
        rows: {g: {lb: [] for lb in labels} for g in groups} for rows in sizes
    }
    broken: dict[tuple[int, str, str], str] = {}
    caps = {label.strip(): int(n) for label, _, n in (item.rpartition("=") for item in args.system_reps)}
    counter = 0
    for rep in range(args.reps):
        for rows in sizes:
            for group in groups:
                # rotate the systems still running this group: each goes first in turn
                live = [s for s in systems if (rows, group, s[0]) not in broken and rep < caps.get(s[0], args.reps)]
                order = live[rep % len(live) :] + live[: rep % len(live)] if live else []
                for label, python, kind in order:
                    counter += 1
                    child_dir = args.workdir / "runs" / f"{counter:03d}-{rows}-{group}-{label.replace(' ', '_')}"
                    shutil.rmtree(child_dir, ignore_errors=True)
                    spec = {
                        "system": kind,
                        "group": group,
                        "rows": rows,
                        "inputs": infos[rows]["inputs"],
                        "filter": infos[rows]["filter"],
                        "jar": str(jar),
                        "conf": CONF,
                        "profile": str(child_dir / "profile") if args.profile else None,
                    }
                    if spec["profile"]:
                        Path(spec["profile"]).mkdir(parents=True, exist_ok=True)
                    out = run_child(python, spec, child_dir, lakestore_path=kind == "lakestore", timeout=args.timeout, src=src)
                    all_results[rows][group][label].append(out)
                    steps = ", ".join(f"{k} {v['seconds']:.2f}" for k, v in out.get("steps", {}).items())
                    print(
                        f"rep {rep + 1} {rows} {group} {label}: {steps or 'no steps'}"
                        + (f" ERROR {out['error'][:300]}" if out.get("error") else ""),
                        flush=True,
                    )
                    if out.get("error") and not out.get("steps"):  # failed before any timed step: this Spark lacks something
                        broken[(rows, group, label)] = out["error"]
                    if not args.keep and not args.profile:
                        shutil.rmtree(child_dir / "warehouse", ignore_errors=True)
                        shutil.rmtree(child_dir / "spark-local", ignore_errors=True)
                        shutil.rmtree(child_dir / "checkpoint", ignore_errors=True)
    seconds = time.perf_counter() - started
    meta = {
        "when": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": "python -m bench.spark_peer " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seconds": seconds,
        "reps": args.reps,
        "load_start": load_start,
        "load_end": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "lakestore": lakestore_rev,
    }
    body = report_markdown(all_results, infos, labels, meta)
    print(body)
    raw = args.json or args.workdir / f"results-{datetime.datetime.now():%Y%m%d-%H%M%S}.json"
    raw.write_text(
        json.dumps(
            {"meta": meta, "infos": {str(k): v for k, v in infos.items()}, "results": {str(k): v for k, v in all_results.items()}},
            default=str,
        )
    )
    print(f"raw results: {raw}")
    if args.report:
        write_report(args.report, body, args.report_section)
        print(f"report section written to {args.report}")
    problems = [p for rows in sizes for p in verify(all_results[rows], infos[rows])]
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
