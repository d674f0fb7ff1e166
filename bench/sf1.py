"""Scale benchmark: TPC-H at scale factor 1 (or any), stage by stage, each stage in a fresh process.

    .venv/bin/python -m bench.sf1                                   # SF1: generate, all of lineitem, 30 days
    .venv/bin/python -m bench.sf1 --scale-factor 0.1 --days 3       # smaller
    .venv/bin/python -m bench.sf1 --stages generate,lineitem        # only some stages

Stages:
- ``generate``: DuckDB dbgen at the scale factor plus the change-traffic fates, cached as parquet
  in the landing zone (what the pipeline's landing assets load).
- ``lineitem``: every lineitem row (6M at SF1) as an insert into the pipeline's lineitem table
  (partitioned by order date, the pipeline's bucket count and options) with ``Table.write_arrow``
  in one commit, then read back in full (merge-on-read).
- ``pipeline``: the Dagster pipeline (dimensions_job, daily_ingestion_job, maintenance_job) for
  ``--days`` days from ``--start``, on Spark ``--spark-master`` (``local[*]`` by default); wall time, rows and peak RSS per step are taken
  from the run's event log and an RSS sampler.

Peak RSS is that of the stage's whole process tree (Python plus the Spark JVM), sampled from /proc
every 100 ms; the report goes to bench/REPORT-sf1.md."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("generate", "lineitem", "pipeline")
JOBS = ("dimensions_job", "daily_ingestion_job", "maintenance_job")
TICKS = os.sysconf("SC_CLK_TCK")


# -- process-tree RSS -------------------------------------------------------------------------
def _proc_table() -> tuple[dict[int, list[int]], dict[int, int]]:
    """Children of every process, and each process's CPU ticks: its own user+system time plus
    that of its reaped children (so a finished Spark worker still counts, once)."""
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            # the command name is in parentheses and may hold spaces: split after the last ')'
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            ppid = int(fields[1])
            ticks[int(entry)] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    return children, ticks


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_usage(root: int) -> tuple[int, float]:
    """(RSS KiB, CPU seconds) of ``root`` and all its descendants."""
    children, ticks = _proc_table()
    rss, cpu, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        rss += _rss_kib(pid)
        cpu += ticks.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return rss, cpu / TICKS


def tree_rss_kib(root: int) -> int:
    return tree_usage(root)[0]


class RssSampler:
    """Samples this process tree's RSS and CPU time in a daemon thread: (wall-clock time, KiB, CPU s)."""

    def __init__(self, interval: float = 0.1) -> None:
        self.samples: list[tuple[float, int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)

    def _run(self, interval: float) -> None:
        pid = os.getpid()
        while not self._stop.is_set():
            self.samples.append((time.time(), *tree_usage(pid)))
            self._stop.wait(interval)

    def __enter__(self) -> RssSampler:
        # The first sample is taken here: the thread may not run before the measured work has.
        self.samples.append((time.time(), *tree_usage(os.getpid())))
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        # A final sample: a busy interpreter holding the GIL may have kept the thread from
        # sampling the end of the measured work.
        self.samples.append((time.time(), *tree_usage(os.getpid())))

    def cpu(self, start: float, end: float) -> float | None:
        """CPU seconds the process tree used between ``start`` and ``end`` (to the sampling interval)."""
        inside = [c for t, _, c in self.samples if start <= t <= end]
        before = [c for t, _, c in self.samples if t < start]
        if not inside:
            return None
        return inside[-1] - (before[-1] if before else inside[0])

    def peak(self, start: float = 0.0, end: float = float("inf")) -> int:
        return max((kib for t, kib, _ in self.samples if start <= t <= end), default=0)


# -- stages (run in the child process) --------------------------------------------------------
def stage_generate(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    from assets.landing.tpch import load_tpch  # noqa: PLC0415 - child process only

    start = time.time()
    data = load_tpch(spec["landing"], spec["scale_factor"])
    end = time.time()
    rows = {name: t.num_rows for name, t in data.tables.items()}
    return {"stages": [_stage("dbgen + fates, cached as parquet", start, end, sum(rows.values()), sampler)], "rows": rows}


def stage_lineitem(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    from assets.common.tables import LINEITEM, LINEITEM_SCHEMA, ensure_table  # noqa: PLC0415
    from assets.landing.tpch import load_tpch  # noqa: PLC0415
    from resources import LakestoreResource  # noqa: PLC0415

    start = time.time()
    data = load_tpch(spec["landing"], spec["scale_factor"])
    source = data.tables["lineitem"]
    order_day = data.fates["lineitem"].order_day
    rows = (
        source.append_column("dt", pc.cast(pa.array(order_day.astype("datetime64[D]")), pa.string()))
        .append_column("_op", pa.array(np.full(source.num_rows, "+I", dtype=object), pa.string()))
        .append_column("_seq", pa.array(order_day.astype(np.int64)))
    )
    for field in LINEITEM_SCHEMA:  # ROW columns of the table nest dbgen's l_<name> columns
        if field.name not in rows.column_names and pa.types.is_struct(field.type):
            children = [field.type.field(i).name for i in range(field.type.num_fields)]
            rows = rows.append_column(field.name, pc.make_struct(*[rows[f"l_{c}"] for c in children], field_names=children))
    rows = rows.select(LINEITEM_SCHEMA.names).cast(LINEITEM_SCHEMA)
    del source
    loaded = time.time()
    resource = LakestoreResource(warehouse=spec["warehouse"])
    table = ensure_table(resource.open(), LINEITEM, resource.lifecycle_options())
    batches = pa.RecordBatchReader.from_batches(rows.schema, rows.to_batches(max_chunksize=500_000))
    t0 = time.time()
    snapshot = table.write_arrow(batches)
    t1 = time.time()
    files = sum(len(s.files) for s in table.scan().plan())
    splits = len(table.scan().plan())
    t2 = time.time()
    read_rows = table.to_arrow().num_rows
    t3 = time.time()
    n = rows.num_rows
    return {
        "stages": [
            _stage("load cached TPC-H, build lineitem rows (untimed input)", start, loaded, n, sampler),
            _stage("lakestore write_arrow, 1 commit", t0, t1, n, sampler),
            _stage("full read back (to_arrow)", t2, t3, read_rows, sampler),
        ],
        "facts": {
            "rows written": n,
            "rows read": read_rows,
            "snapshot": snapshot.id if snapshot else None,
            "data files": files,
            "partition-buckets (splits)": splits,
            "table options": resource.lifecycle_options(),
        },
    }


def stage_pipeline(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    os.environ["DAGSTER_HOME"] = spec["dagster_home"]
    os.environ["LAKESTORE_WAREHOUSE"] = spec["warehouse"]
    os.environ["TPCH_SCALE_FACTOR"] = repr(spec["scale_factor"])
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    Path(spec["dagster_home"]).mkdir(parents=True, exist_ok=True)
    (Path(spec["dagster_home"]) / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    import dagster as dg  # noqa: PLC0415 - after DAGSTER_HOME is set

    from pipelines.definitions import build_definitions  # noqa: PLC0415
    from resources import LakestoreResource, LandingResource, spark_resource  # noqa: PLC0415
    from resources.spark import stop_session  # noqa: PLC0415

    first = dt.date.fromisoformat(spec["start"])
    last = first + dt.timedelta(days=spec["days"] - 1)
    defs = build_definitions(
        catalog=LakestoreResource(warehouse=spec["warehouse"]),
        landing=LandingResource(root=spec["landing"], scale_factor=spec["scale_factor"]),
        spark=spark_resource(spec.get("spark_master", "local[*]")),
    )
    instance = dg.DagsterInstance.get()
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    day_range = {"dagster/asset_partition_range_start": first.isoformat(), "dagster/asset_partition_range_end": last.isoformat()}
    stages, jobs = [], []
    try:
        for job in JOBS:
            t0 = time.time()
            result = defs.resolve_job_def(job).execute_in_process(
                instance=instance, tags={} if job == "dimensions_job" else day_range, run_config=quiet, raise_on_error=False
            )
            t1 = time.time()
            jobs.append(_stage(f"{job} (whole run)", t0, t1, None, sampler) | {"success": result.success})
            stages += _steps(instance, result.run_id, job, sampler)
            if not result.success:
                break
    finally:
        stop_session()
    return {"stages": stages, "jobs": jobs, "facts": {"days": f"{first} .. {last} ({spec['days']} days)"}}


def _steps(instance: Any, run_id: str, job: str, sampler: RssSampler) -> list[dict[str, Any]]:
    """Each step's wall time (STEP_START to STEP_SUCCESS/FAILURE), rows from its materializations, peak RSS."""
    starts: dict[str, float] = {}
    out: dict[str, dict[str, Any]] = {}
    rows: dict[str, int] = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None or entry.step_key is None:
            continue
        kind = event.event_type_value
        if kind == "STEP_START":
            starts[entry.step_key] = entry.timestamp
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and entry.step_key in starts:
            start = starts[entry.step_key]
            out[entry.step_key] = _stage(f"{job}: {entry.step_key}", start, entry.timestamp, None, sampler)
            out[entry.step_key]["success"] = kind == "STEP_SUCCESS"
        elif kind == "ASSET_MATERIALIZATION":
            meta = event.event_specific_data.materialization.metadata
            for key in ("landed_rows", "rows", "rows_added"):
                if key in meta:
                    # a single-run backfill emits one materialization per day, each with the run's totals
                    rows[entry.step_key] = max(rows.get(entry.step_key, 0), int(meta[key].value))
                    break
    for key, stage in out.items():
        if key in rows:
            stage["rows"] = rows[key]
            stage["rows_per_s"] = rows[key] / stage["seconds"] if stage["seconds"] else None
    return sorted(out.values(), key=lambda s: s["start"])


def _stage(name: str, start: float, end: float, rows: int | None, sampler: RssSampler) -> dict[str, Any]:
    seconds = end - start
    return {
        "name": name,
        "start": start,
        "seconds": seconds,
        "rows": rows,
        "rows_per_s": rows / seconds if rows and seconds else None,
        "peak_rss_kib": sampler.peak(start, end),
        "cpu_s": sampler.cpu(start, end),
    }


CHILD_STAGES = {"generate": stage_generate, "lineitem": stage_lineitem, "pipeline": stage_pipeline}


StageFn = Callable[[dict[str, Any], RssSampler], dict[str, Any]]


def child_main(stage: str, spec_path: str, stages: Mapping[str, StageFn] | None = None) -> int:
    """A child process's stage (of ``stages``, this module's by default): its JSON on stdout."""
    spec = json.loads(Path(spec_path).read_text())
    sys.path.insert(0, str(ROOT))
    with RssSampler() as sampler:
        out = (CHILD_STAGES if stages is None else stages)[stage](spec, sampler)
    out["process_peak_rss_kib"] = sampler.peak()
    print(json.dumps(out, default=str))
    return 0


# -- parent ------------------------------------------------------------------------------------
def run_stage(
    stage: str,
    spec: dict[str, Any],
    timeout: float,
    module: str = "bench.sf1",
    *,
    python: str | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run ``stage`` in a fresh ``<python> -m <module> --child`` process (this interpreter, from the
    repository, by default; ``env`` on top of this environment); its JSON result, or an error. The
    child runs in a process group of its own: a timeout kills the whole group (a Spark driver's JVM
    and executors included) and reports ``timed_out``."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    environ = dict(os.environ)
    environ.setdefault("TMPDIR", str(Path(spec["workdir"]) / "tmp"))
    environ.update(env or {})
    Path(environ["TMPDIR"]).mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    proc = subprocess.Popen(
        [python or sys.executable, "-m", module, "--child", stage, fh.name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd or ROOT,
        env=environ,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        return {"error": f"timed out after {timeout:.0f} s", "timed_out": True, "process_seconds": time.time() - t0}
    finally:
        os.unlink(fh.name)
    wall = time.time() - t0
    (Path(spec["workdir"]) / f"{stage.replace('/', '-')}.stderr.log").write_text(stderr)  # the whole of it, for failures
    if proc.returncode != 0 or not stdout.strip():
        return {"error": (stderr.strip() or f"exit {proc.returncode}")[-3000:], "process_seconds": wall}
    out: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    out["process_seconds"] = wall
    return out


def timed_stage(stage: str, spec: dict[str, Any], timeout: float, *, module: str, **child: Any) -> dict[str, Any]:
    """``run_stage`` (``child``: its keyword arguments) with the load before and after and the start
    time recorded, its stages printed."""
    print(f"{module.removeprefix('bench.')} bench: stage {stage} ...", flush=True)
    load_before, ran_at = list(os.getloadavg()), dt.datetime.now().isoformat(timespec="seconds")
    out = run_stage(stage, spec, timeout, module=module, **child)
    out.update(load_before=load_before, load_after=list(os.getloadavg()), ran_at=ran_at)
    if "error" in out:
        print(f"  FAILED: {out['error'][-600:]}", flush=True)
        return out
    for s in out.get("jobs", []) + out["stages"]:
        print(
            f"  {s['name']:<60} {s['seconds']:8.1f} s  rows {_fmt_rows(s['rows']):>11}  peak {_mib(s['peak_rss_kib']):>7} MiB", flush=True
        )
    return out


def _fmt_rows(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def _mib(kib: int) -> str:
    return f"{kib / 1024:,.0f}"


def _fmt_rate(value: Any) -> str:
    return f"{value:,.0f}" if isinstance(value, (int, float)) and value else "-"


def _load(values: list[float]) -> str:
    return " / ".join(f"{x:.2f}" for x in values)


def stage_section(stage: str, out: dict[str, Any], command: str) -> list[str]:
    lines = [
        f"## {stage}",
        "",
        f"Ran {out.get('ran_at', '?')} by `{command}`; load average (1/5/15 min) before {_load(out.get('load_before', []))},"
        f" after {_load(out.get('load_after', []))}.",
        "",
    ]
    if "error" in out:
        return lines + [f"Failed after {out['process_seconds']:.0f} s:", "", "```", out["error"][-1500:], "```", ""]
    lines += ["| step | wall s | CPU s | rows | rows/s (wall) | peak RSS MiB |", "|---|---|---|---|---|---|"]
    for s in out.get("jobs", []) + out["stages"]:
        ok = "" if s.get("success", True) else " (FAILED)"
        cpu = f"{s['cpu_s']:.1f}" if s.get("cpu_s") is not None else "-"
        cells = (f"{s['name']}{ok}", f"{s['seconds']:.1f}", cpu, _fmt_rows(s["rows"]), _fmt_rate(s["rows_per_s"]), _mib(s["peak_rss_kib"]))
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"- process wall time (spawn to exit): {out['process_seconds']:.1f} s;"
        f" peak RSS of the process tree: {_mib(out['process_peak_rss_kib'])} MiB",
    ]
    for k, v in out.get("facts", {}).items():
        lines.append(f"- {k}: {v if not isinstance(v, int) else f'{v:,}'}")
    if "rows" in out:
        lines.append("- TPC-H rows: " + ", ".join(f"{k} {v:,}" for k, v in out["rows"].items()))
    return lines + [""]


def markdown(args: argparse.Namespace, results: dict[str, dict[str, Any]], previous: str | None = None) -> str:
    """The report; sections of stages not run this time are kept from ``previous`` (the old report)."""
    from bench.report import machine  # noqa: PLC0415

    command = f"python -m bench.sf1 {' '.join(args.argv)}".strip()
    kept: dict[str, str] = {}
    for part in (previous or "").split("\n## ")[1:]:
        name = part.split("\n", 1)[0].strip()
        if name in STAGES and name not in results:
            kept[name] = "## " + part.rstrip("\n") + "\n"
    lines = [
        "# lakestore scale benchmark (TPC-H)",
        "",
        f"Updated {dt.datetime.now().isoformat(timespec='seconds')}. Every stage runs once, in its own fresh process (its",
        "first run in that process: no warm-up), and says which command ran it and the load average around it. Peak RSS",
        "and CPU time are those of the stage's process tree (Python plus the Spark JVM and its workers when they run),",
        "sampled every 100 ms. The machine is shared: wall times stretch with the load average; CPU seconds much less so.",
        "",
        "## Machine",
        "",
        "|  |  |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in machine() if not k.startswith("load average")],
        "",
    ]
    for stage in STAGES:
        if stage in results:
            lines += stage_section(stage, results[stage], command)
        elif stage in kept:
            lines += [kept[stage]]
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.sf1", description=__doc__.split("\n\n")[0])
    p.add_argument("--scale-factor", type=float, default=1.0)
    p.add_argument("--days", type=int, default=30, help="days of the pipeline stage")
    p.add_argument("--spark-master", default="local[*]", help="Spark master of the pipeline stage (e.g. local-cluster[2,1,4096])")
    p.add_argument("--start", default="1995-03-01", help="first day of the pipeline stage (1992-01-01 .. 1998-08-02)")
    p.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    p.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a temp dir, removed)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--report", type=Path, default=ROOT / "bench" / "REPORT-sf1.md")
    p.add_argument("--timeout", type=float, default=4 * 3600, help="seconds per stage")
    args = p.parse_args(argv)
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return child_main(argv[1], argv[2])
    args = parse_args(argv)
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = set(stages) - set(STAGES)
    if unknown:
        raise SystemExit(f"unknown stages: {sorted(unknown)}")
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="lakestore-sf1-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    landing = workdir / "landing"  # shared: the TPC-H cache is generated once
    results: dict[str, dict[str, Any]] = {}
    try:
        for stage in stages:
            spec = {
                "scale_factor": args.scale_factor,
                "landing": str(landing),
                "warehouse": str(workdir / f"warehouse-{stage}"),
                "dagster_home": str(workdir / "dagster_home"),
                "start": args.start,
                "days": args.days,
                "spark_master": args.spark_master,
                "workdir": str(workdir),
            }
            # a fresh warehouse: the pipeline skips days already ingested, and a second lineitem write would be upserts
            shutil.rmtree(spec["warehouse"], ignore_errors=True)
            if stage == "pipeline":
                shutil.rmtree(spec["dagster_home"], ignore_errors=True)
            results[stage] = timed_stage(stage, spec, args.timeout, module="bench.sf1")
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    previous = args.report.read_text() if args.report.exists() else None
    args.report.write_text(markdown(args, results, previous))
    print(f"report written to {args.report}")
    return 0 if all("error" not in r for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
