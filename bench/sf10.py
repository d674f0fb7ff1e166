"""Scale benchmark: TPC-H SF10 lineitem (60M rows), single process and on Spark, stage by stage,
each stage in a fresh process (bench/sf1.py's conventions: wall, CPU and peak RSS of the process
tree sampled every 100 ms, load average around each stage; report in bench/REPORT-sf10.md, rewritten
as each stage ends).

    .venv/bin/python -m bench.sf10                                  # SF10: every stage, every system
    .venv/bin/python -m bench.sf10 --scale-factor 1 --timeout 1800  # smaller
    .venv/bin/python -m bench.sf10 --systems single --stages write,compact,read

Systems (``--systems``): ``single`` (lakestore in one Python process), ``lakestore-spark``
(lakestore's Spark path, pyspark 4.3 in ``.venv``) and ``paimon-spark`` (Apache Paimon 2.0.0's Spark
connector, pyspark 4.0.5 in ``--spark40-python``); the Spark systems run on ``--master``
(``local-cluster[2,1,4096]``: two executor JVMs of one core each) and are described in
``bench.sf10_spark``. Stages are interleaved by system (write: every system, then compact, then
read) so that each stage's systems run under comparable load; a system whose stage fails or times
out (``--timeout`` seconds, the whole process group killed) in its write skips its later stages (a
stopped compaction commits nothing: the read goes on), and a timed-out write reports the rows its
landed commits held. Each system's table is removed after its read stage
unless ``--keep``. The lakestore measured is a ``git archive`` of ``--lakestore-commit`` (HEAD),
as in bench.spark_peer.

Stages:
- ``generate``: DuckDB dbgen at the scale factor, lineitem joined with its orders' dates, cached
  as ONE parquet file of the table's input rows under ``--cache`` (git-ignored ``.tmp/`` by
  default); DuckDB works from a database file with a memory limit, not in memory.
- ``write``: every lineitem row as an insert into the pipeline's lineitem table (partitioned by
  order date, its bucket count and options, as bench/sf1.py) in commits of ``--commit-rows`` rows:
  single streams the cache in batches of 500k rows into ``Table.write_arrow``; the Spark systems
  read it with one Spark SQL query per commit (an l_orderkey range cut at the same row groups).
- ``compact``: full compaction (every bucket into one sorted run on the last level):
  ``Table.compact(full=True)``, ``lakestore.spark.compact(full=True)``, ``CALL sys.compact``.
- ``read``: a full read back: single streams ``Table.to_batches``; the Spark systems aggregate
  count / bit_xor(xxhash64(every column)) / sum(l_quantity) over the table, compared across them."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import sf1, sf10_spark
from bench.sf1 import RssSampler, _stage, stage_section

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("generate", "write", "compact", "read")
SYSTEMS = ("single", *sf10_spark.SYSTEMS)
BATCH_ROWS = 500_000


def cache_path(cache: str, scale_factor: float) -> Path:
    return Path(cache) / f"sf={scale_factor:g}" / "lineitem-rows.parquet"


def generate(scale_factor: float, cache: str, *, memory_limit: str = "4GB") -> dict[str, Any]:
    """DuckDB dbgen's lineitem joined with its orders' dates, cached as one parquet file of the
    table's input rows (``dt`` the order date, ``_op`` '+I', ``_seq`` the order day), sorted by
    (l_orderkey, l_linenumber) as dbgen emits them. DuckDB works on disk (a database file and
    spill directory beside the cache), so its memory stays near ``memory_limit``."""
    import duckdb  # noqa: PLC0415

    from assets.landing.tpch import tpch_extension_path  # noqa: PLC0415

    target = cache_path(cache, scale_factor)
    if target.exists():
        return {"cached": str(target)}
    target.parent.mkdir(parents=True, exist_ok=True)
    db = target.parent / "dbgen.duckdb"
    db.unlink(missing_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    con = duckdb.connect(str(db))
    try:
        con.sql(f"SET memory_limit='{memory_limit}'")
        con.sql(f"SET temp_directory='{target.parent / 'duckdb-tmp'}'")
        con.sql("SET preserve_insertion_order=true")
        con.sql(f"LOAD '{tpch_extension_path()}'")
        t0 = time.time()
        con.sql(f"CALL dbgen(sf={float(scale_factor)!r})")
        t1 = time.time()
        con.sql(
            f"""COPY (
                SELECT l_orderkey, l_partkey, l_suppkey, l_linenumber, l_quantity, l_extendedprice, l_discount, l_tax,
                       l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode,
                       l_comment, CAST(o_orderdate AS VARCHAR) AS dt, '+I' AS _op,
                       CAST(date_diff('day', DATE '1970-01-01', o_orderdate) AS BIGINT) AS _seq
                FROM lineitem JOIN orders ON l_orderkey = o_orderkey
                ORDER BY l_orderkey, l_linenumber
            ) TO '{tmp}' (FORMAT parquet, ROW_GROUP_SIZE 500000, COMPRESSION zstd)"""
        )
        t2 = time.time()
        rows = con.sql(f"SELECT count(*) FROM read_parquet('{tmp}')").fetchone()[0]
    finally:
        con.close()
        db.unlink(missing_ok=True)
    os.replace(tmp, target)
    return {"rows": rows, "dbgen_s": t1 - t0, "copy_s": t2 - t1}


def _lineitem_batches(path: Path, rows_per_commit: int) -> Iterator[Iterator[Any]]:
    """The cached rows as one iterator of table-typed batches per commit."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    from assets.common.tables import LINEITEM_FLAGS, LINEITEM_SCHEMA  # noqa: PLC0415

    source = pq.ParquetFile(path)
    batches = source.iter_batches(batch_size=BATCH_ROWS)
    names = [f.name for f in LINEITEM_FLAGS]

    def convert(batch: Any) -> Any:
        flags = pc.make_struct(batch.column("l_returnflag"), batch.column("l_linestatus"), field_names=names)
        table = pa.Table.from_batches([batch]).append_column("l_flags", flags)
        return table.select(LINEITEM_SCHEMA.names).cast(LINEITEM_SCHEMA)

    pending: list[Any] = []

    def one_commit(first: Any) -> Iterator[Any]:
        taken, batch = 0, first
        while batch is not None:
            table = convert(batch)
            taken += table.num_rows
            yield table
            if taken >= rows_per_commit:
                return
            batch = next(batches, None)
        pending.append(None)  # the source is exhausted

    while not pending:
        first = next(batches, None)
        if first is None:
            return
        yield one_commit(first)


def _open_table(spec: dict[str, Any]) -> Any:
    from assets.common.tables import LINEITEM, ensure_table  # noqa: PLC0415
    from resources import LakestoreResource  # noqa: PLC0415

    resource = LakestoreResource(warehouse=spec["warehouse"])
    return ensure_table(resource.open(), LINEITEM, resource.lifecycle_options()), resource


def stage_generate(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    start = time.time()
    out = generate(spec["scale_factor"], spec["cache"])
    end = time.time()
    import pyarrow.parquet as pq  # noqa: PLC0415

    rows = pq.ParquetFile(cache_path(spec["cache"], spec["scale_factor"])).metadata.num_rows
    name = "cached parquet found (generated earlier)" if "cached" in out else "dbgen + join + sort, cached as parquet"
    return {"stages": [_stage(name, start, end, rows, sampler)], "facts": {k: v for k, v in out.items() if k != "cached"}}


def stage_write(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    table, resource = _open_table(spec)
    path = cache_path(spec["cache"], spec["scale_factor"])
    import pyarrow as pa  # noqa: PLC0415

    rows, commits, start = 0, [], time.time()
    arrow_pool: list[int] = []  # MiB held by Arrow's memory pool after each commit
    for batches in _lineitem_batches(path, spec["commit_rows"]):
        counted: list[int] = []

        def counting(source: Iterator[Any] = batches, into: list[int] = counted) -> Iterator[Any]:
            for table_batch in source:
                into.append(table_batch.num_rows)
                yield from table_batch.to_batches()

        t0 = time.time()
        table.write_arrow(counting())
        t1 = time.time()
        rows += sum(counted)
        commits.append(_stage(f"commit {len(commits) + 1}: write_arrow", t0, t1, sum(counted), sampler))
        arrow_pool.append(pa.total_allocated_bytes() >> 20)
    end = time.time()
    files = sum(len(s.files) for s in table.scan().plan())
    whole = _stage(
        f"lakestore write_arrow, {len(commits)} commits of <= {spec['commit_rows']:,} rows (input read and converted inside)",
        start,
        end,
        rows,
        sampler,
    )
    return {
        "stages": [whole, *commits],
        "facts": {
            "rows written": rows,
            "snapshots": len(table.snapshots()),
            "data files": files,
            "partition-buckets (splits)": len(table.scan().plan()),
            "table options": resource.lifecycle_options(),
            "Arrow memory pool after each commit (MiB)": arrow_pool,
        },
    }


def stage_compact(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    table, _ = _open_table(spec)
    before = sum(len(s.files) for s in table.scan().plan())
    rows = sum(f.row_count for s in table.scan().plan() for f in s.files)
    t0 = time.time()
    table.compact(full=True)
    t1 = time.time()
    after = sum(len(s.files) for s in table.scan().plan())
    return {
        "stages": [_stage("Table.compact(full=True)", t0, t1, rows, sampler)],
        "facts": {"data files before": before, "data files after": after},
    }


def stage_read(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    table, _ = _open_table(spec)
    t0 = time.time()
    rows = sum(batch.num_rows for batch in table.to_batches())
    t1 = time.time()
    return {"stages": [_stage("full read back, streamed (to_batches)", t0, t1, rows, sampler)], "facts": {"rows read": rows}}


CHILD_STAGES = {
    "generate": stage_generate,
    "write/single": stage_write,
    "compact/single": stage_compact,
    "read/single": stage_read,
    **sf10_spark.CHILD_STAGES,
}


def child_main(stage: str, spec_path: str) -> int:
    return sf1.child_main(stage, spec_path, CHILD_STAGES)


# -- parent ------------------------------------------------------------------------------------
def chunks(path: Path, rows_per_commit: int) -> tuple[list[list[int | None]], list[int]]:
    """The l_orderkey ranges [lo, hi) of the Spark systems' commits (None: open) and their row
    counts: cut at the first row group reaching ``rows_per_commit`` rows, at that row group's
    smallest key (the file is sorted by l_orderkey, so each commit's query reads its row groups)."""
    import numpy as np  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    source = pq.ParquetFile(path)
    meta = source.metadata
    column = meta.schema.names.index("l_orderkey")
    cuts: list[int] = []
    taken = 0
    for i in range(meta.num_row_groups):
        if taken >= rows_per_commit:
            cuts.append(int(meta.row_group(i).column(column).statistics.min))
            taken = 0
        taken += meta.row_group(i).num_rows
    bounds: list[int | None] = [None, *cuts, None]
    ranges = [[bounds[i], bounds[i + 1]] for i in range(len(bounds) - 1)]
    counts = np.zeros(len(ranges), dtype=np.int64)
    edges = np.array(cuts, dtype=np.int64)
    for batch in source.iter_batches(batch_size=BATCH_ROWS * 4, columns=["l_orderkey"]):
        counts += np.bincount(np.searchsorted(edges, batch.column(0).to_numpy(), side="right"), minlength=len(ranges))
    return ranges, [int(c) for c in counts]


def paimon_ddl() -> str:
    """``CREATE TABLE IF NOT EXISTS {name} ...`` of the pipeline's lineitem table for paimon-spark: its columns,
    keys, partitioning and options (the lifecycle options of the catalog resource included)."""
    from pyspark.sql.pandas.types import from_arrow_schema  # noqa: PLC0415

    from assets.common.tables import LINEITEM  # noqa: PLC0415
    from resources import LakestoreResource  # noqa: PLC0415

    spark_types = from_arrow_schema(LINEITEM.schema)
    cols = ", ".join(
        f"{f.name} {spark_types[f.name].dataType.simpleString().upper()}{'' if f.nullable else ' NOT NULL'}" for f in LINEITEM.schema
    )
    options = {
        **LINEITEM.options,
        **LakestoreResource(warehouse=".").lifecycle_options(),
        "primary-key": ",".join(LINEITEM.primary_keys),
    }
    props = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return f"CREATE TABLE IF NOT EXISTS {{name}} ({cols}) PARTITIONED BY ({', '.join(LINEITEM.partition_keys)}) TBLPROPERTIES ({props})"


def _progress_note(path: Path) -> str:
    """What a timed-out write had committed (its progress lines)."""
    if not path.exists() or not path.read_text().strip():
        return "nothing committed before the timeout"
    last = json.loads(path.read_text().strip().splitlines()[-1])
    return (
        f"committed {last['rows']:,} rows in {last['commits']} commits in {last['seconds']:.0f} s before the timeout"
        f" ({last['rows'] / last['seconds']:,.0f} rows/s); peak RSS of the process tree by then {last['peak_rss_kib'] / 1024:,.0f} MiB"
    )


def main_step(out: dict[str, Any]) -> dict[str, Any] | None:
    """A stage's measured step: its first with rows (the session start of Spark stages has none)."""
    return next((s for s in out.get("stages", []) if s.get("rows") is not None), None)


def summary(results: dict[str, dict[str, Any]], systems: list[str]) -> list[str]:
    """One row per stage and system (the measured step), and lakestore-spark / paimon-spark."""
    lines = [
        "## Summary",
        "",
        "The measured step of each stage (Spark stages: without the session start, which is its own row in the stage",
        "section). `ls/ps` = lakestore-spark wall / paimon-spark wall (< 1: lakestore faster). Load: 1-minute load average",
        "before / after the stage (2 cores; other work on the machine raises it).",
        "",
        "| stage | system | wall s | CPU s | rows | rows/s (wall) | peak RSS MiB (process tree) | load before / after | ls/ps |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for stage in STAGES[1:]:
        walls: dict[str, float] = {}
        for system in systems:
            out = results.get(f"{stage}/{system}")
            if out is None:
                continue
            load = f"{out.get('load_before', [0])[0]:.2f} / {out.get('load_after', [0])[0]:.2f}"
            step = main_step(out)
            if step is None:
                what = "timed out" if out.get("timed_out") else ("skipped" if out.get("skipped") else "failed")
                note = out.get("progress", "")
                lines.append(f"| {stage} | {system} | {what} ({out.get('process_seconds', 0):.0f} s) | - | - | {note} | - | {load} | |")
                continue
            walls[system] = step["seconds"]
            cpu = f"{step['cpu_s']:.0f}" if step.get("cpu_s") is not None else "-"
            rate = f"{step['rows_per_s']:,.0f}" if step.get("rows_per_s") else "-"
            ratio = ""
            if system == "paimon-spark" and "lakestore-spark" in walls:
                ratio = f"{walls['lakestore-spark'] / step['seconds']:.2f}"
            lines.append(
                f"| {stage} | {system} | {step['seconds']:.1f} | {cpu} | {step['rows']:,} | {rate} |"
                f" {step['peak_rss_kib'] / 1024:,.0f} | {load} | {ratio} |"
            )
    checks = {s: results[f"read/{s}"].get("checks") for s in systems if results.get(f"read/{s}", {}).get("checks")}
    if len(checks) > 1:
        same = len({json.dumps(c, sort_keys=True) for c in checks.values()}) == 1
        lines += ["", f"Read checks (count, bit_xor(xxhash64(all columns)), sum(l_quantity)) {'equal' if same else 'DIFFER'}: {checks}"]
    return [*lines, ""]


def markdown(args: argparse.Namespace, results: dict[str, dict[str, Any]], previous: str | None, source: str) -> str:
    from bench.report import machine  # noqa: PLC0415

    command = f"python -m bench.sf10 {' '.join(args.argv)}".strip()
    names = ["generate", *(f"{stage}: {system}" for stage in STAGES[1:] for system in SYSTEMS)]
    kept: dict[str, str] = {}
    notes = ""
    if previous:
        for part in previous.split("\n## ")[1:]:
            name = part.split("\n", 1)[0].strip()
            if name in names and name.replace(": ", "/") not in results:
                kept[name] = "## " + part.rstrip("\n") + "\n"
            elif name == "Notes":
                notes = "## " + part.rstrip("\n") + "\n"
    lines = [
        f"# lakestore scale benchmark: TPC-H SF{args.scale_factor:g} lineitem, single process and Spark {args.master}",
        "",
        f"Updated {dt.datetime.now().isoformat(timespec='seconds')}. Every stage runs once per system, in its own fresh process",
        "(for Spark: a driver and its executors), stages interleaved by system (write: every system, then compact, then",
        "read), and says which command ran it and the load average around it. Peak RSS and CPU time are those of the",
        "stage's process tree (Python, the Spark driver JVM, executor JVMs and their Python workers), sampled every",
        "100 ms. The machine is shared: wall times stretch with the load average; CPU seconds much less so.",
        f"lakestore measured: {source}.",
        "",
        "## Machine",
        "",
        "|  |  |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in machine() if not k.startswith("load average")],
        "",
        *summary(results, SYSTEMS),
    ]
    for name in names:
        key = name.replace(": ", "/")
        if key in results:
            lines += stage_section(name, results[key], command)
            if results[key].get("progress"):
                lines.insert(-1, f"- {results[key]['progress']}")
        elif name in kept:
            lines += [kept[name]]
    if notes:
        lines += [notes]
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.sf10", description=__doc__.split("\n\n")[0])
    p.add_argument("--scale-factor", type=float, default=10.0)
    p.add_argument("--commit-rows", type=int, default=10_000_000, help="rows per commit of the write stage (every system)")
    p.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    p.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}")
    p.add_argument("--master", default="local-cluster[2,1,4096]", help="Spark master of the Spark systems")
    p.add_argument("--executor-memory", default="3g", help="spark.executor.memory (each local-cluster worker has 4096 MB)")
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--spark40-python", default=str(ROOT / ".venv-spark40" / "bin" / "python"), help="pyspark 4.0.5 (paimon-spark)")
    p.add_argument("--lakestore-commit", default="HEAD", help="the lakestore measured (git archive), or 'worktree'")
    p.add_argument("--cache", default=str(ROOT / ".tmp" / "tpch-cache"), help="where the generated rows are cached")
    p.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a temp dir, removed)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory and every system's table")
    p.add_argument("--report", type=Path, default=ROOT / "bench" / "REPORT-sf10.md")
    p.add_argument("--timeout", type=float, default=4 * 3600, help="seconds per stage")
    args = p.parse_args(argv)
    args.argv = argv
    return args


def _cluster_cores(master: str) -> int:
    """Cores of a ``local-cluster[workers,cores,memory]`` or ``local[N]`` master."""
    inner = master[master.index("[") + 1 : master.rindex("]")].split(",") if "[" in master else ["1"]
    if master.startswith("local-cluster["):
        return int(inner[0]) * int(inner[1])
    return int(inner[0]) if inner[0].strip().isdigit() else os.cpu_count() or 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return child_main(argv[1], argv[2])
    from bench.spark_peer import lakestore_source, paimon_spark_jar  # noqa: PLC0415

    args = parse_args(argv)
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = (set(stages) - set(STAGES)) | (set(systems) - set(SYSTEMS))
    if unknown:
        raise SystemExit(f"unknown stages or systems: {sorted(unknown)}")
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="lakestore-sf10-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    src, rev = lakestore_source(args.lakestore_commit, workdir, ("lakestore", "assets", "resources", "pipelines"))
    source = f"{rev} (`git archive` of lakestore/ and the pipeline's packages)" if src != ROOT else rev
    cache = str(Path(args.cache).resolve())
    base = {"scale_factor": args.scale_factor, "cache": cache, "commit_rows": args.commit_rows, "workdir": str(workdir)}
    results: dict[str, dict[str, Any]] = {}
    previous = args.report.read_text() if args.report.exists() else None

    def report() -> None:
        args.report.write_text(markdown(args, results, previous, source))

    python = {"single": sys.executable, "lakestore-spark": sys.executable, "paimon-spark": args.spark40_python}
    child_env = {"PYTHONPATH": str(src), "SPARK_LOCAL_IP": "127.0.0.1", "TZ": "UTC"}
    try:
        if "generate" in stages:
            results["generate"] = sf1.timed_stage("generate", base, args.timeout, module="bench.sf10", cwd=src, env=child_env)
            report()
        path = cache_path(cache, args.scale_factor)
        spark_systems = [s for s in systems if s != "single"]
        extra: dict[str, Any] = {}
        if spark_systems and path.exists():
            ranges, counts = chunks(path, args.commit_rows)
            extra = {
                "input": str(path),
                "chunks": ranges,
                "chunk_rows": counts,
                "rows": sum(counts),
                "columns": _lineitem_columns(),
                "master": args.master,
                "executor_memory": args.executor_memory,
                "driver_memory": args.driver_memory,
                "parallelism": _cluster_cores(args.master),
                "shuffle_partitions": 2 * _cluster_cores(args.master),
                "jar": str(paimon_spark_jar()),
                "paimon_ddl": paimon_ddl() if "paimon-spark" in spark_systems else "",
            }
        failed: set[str] = set()
        for stage in (s for s in STAGES[1:] if s in stages):
            for system in systems:
                key = f"{stage}/{system}"
                system_dir = workdir / system
                spec = {**base, **extra, "system": system, "system_dir": str(system_dir), "warehouse": str(system_dir / "warehouse")}
                spec["progress"] = str(system_dir / f"progress-{stage}.jsonl")
                if system in failed:
                    results[key] = {
                        "error": "skipped: an earlier stage of this system did not finish",
                        "skipped": True,
                        "process_seconds": 0,
                    }
                    report()
                    continue
                if stage == "write":  # a second write would be upserts
                    shutil.rmtree(system_dir, ignore_errors=True)
                system_dir.mkdir(parents=True, exist_ok=True)
                Path(spec["progress"]).unlink(missing_ok=True)
                env = {**child_env, "TMPDIR": str(system_dir / "tmp"), "PYSPARK_PYTHON": python[system]}
                results[key] = sf1.timed_stage(key, spec, args.timeout, module="bench.sf10", python=python[system], cwd=src, env=env)
                if "error" in results[key] and stage == "write":  # a stopped compaction commits nothing: read on
                    failed.add(system)
                    results[key]["progress"] = _progress_note(Path(spec["progress"]))
                if system != "single":
                    _remove_worker_dirs(python[system], workdir)
                if stage == "read" and not args.keep:
                    shutil.rmtree(system_dir, ignore_errors=True)
                report()
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    report()
    print(f"report written to {args.report}")
    return 0 if all("error" not in r for r in results.values()) else 1


def _remove_worker_dirs(python: str, workdir: Path) -> None:
    """local-cluster workers keep each application's executor logs and jars (~90 MiB with
    paimon-spark's) in ``<pyspark>/work/app-*``, inside the virtual environment: remove this run's
    (their executor logs name ``workdir``), never another application's."""
    for app in Path(python).parent.parent.glob("lib/python3*/site-packages/pyspark/work/app-*"):
        logs = list(app.glob("*/stderr"))
        if any(str(workdir) in log.read_text(errors="replace") for log in logs):
            shutil.rmtree(app, ignore_errors=True)


def _lineitem_columns() -> list[str]:
    from assets.common.tables import LINEITEM_SCHEMA  # noqa: PLC0415

    return list(LINEITEM_SCHEMA.names)


if __name__ == "__main__":
    sys.exit(main())
