"""Scale benchmark: TPC-H SF10 lineitem (60M rows) single-process, stage by stage, each stage in
a fresh process (bench/sf1.py's conventions: wall, CPU and peak RSS of the process tree sampled
every 100 ms, load average around each stage; report in bench/REPORT-sf10.md).

    .venv/bin/python -m bench.sf10                                  # SF10: generate, write, compact, read
    .venv/bin/python -m bench.sf10 --scale-factor 1 --commit-rows 2000000   # smaller

Stages:
- ``generate``: DuckDB dbgen at the scale factor, lineitem joined with its orders' dates, cached
  as ONE parquet file of the table's input rows under ``--cache`` (git-ignored ``.tmp/`` by
  default); DuckDB works from a database file with a memory limit, not in memory.
- ``write``: every lineitem row as an insert into the pipeline's lineitem table (partitioned by
  order date, its bucket count and options, as bench/sf1.py), streamed from the cache in batches of
  500k rows, with ``Table.write_arrow`` in commits of ``--commit-rows`` rows each.
- ``compact``: ``Table.compact(full=True)``: every bucket into one sorted run on the last level.
- ``read``: a full read back streamed with ``Table.to_batches`` (merge-on-read of what is left)."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import sf1
from bench.sf1 import RssSampler, _stage, stage_section

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("generate", "write", "compact", "read")
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
    rows, commits, start = 0, [], time.time()
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
    end = time.time()
    files = sum(len(s.files) for s in table.plan())
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
            "partition-buckets (splits)": len(table.plan()),
            "table options": resource.lifecycle_options(),
        },
    }


def stage_compact(spec: dict[str, Any], sampler: RssSampler) -> dict[str, Any]:
    table, _ = _open_table(spec)
    before = sum(len(s.files) for s in table.plan())
    rows = sum(f.row_count for s in table.plan() for f in s.files)
    t0 = time.time()
    table.compact(full=True)
    t1 = time.time()
    after = sum(len(s.files) for s in table.plan())
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


CHILD_STAGES = {"generate": stage_generate, "write": stage_write, "compact": stage_compact, "read": stage_read}


def child_main(stage: str, spec_path: str) -> int:
    return sf1.child_main(stage, spec_path, CHILD_STAGES)


def markdown(args: argparse.Namespace, results: dict[str, dict[str, Any]], previous: str | None) -> str:
    from bench.report import machine  # noqa: PLC0415

    command = f"python -m bench.sf10 {' '.join(args.argv)}".strip()
    kept: dict[str, str] = {}
    notes = ""
    if previous:
        parts = previous.split("\n## ")
        for part in parts[1:]:
            name = part.split("\n", 1)[0].strip()
            if name in STAGES and name not in results:
                kept[name] = "## " + part.rstrip("\n") + "\n"
            elif name == "Notes":
                notes = "## " + part.rstrip("\n") + "\n"
    lines = [
        f"# lakestore scale benchmark: TPC-H SF{args.scale_factor:g} lineitem, single process",
        "",
        f"Updated {dt.datetime.now().isoformat(timespec='seconds')}. Every stage runs once, in its own fresh process, and says",
        "which command ran it and the load average around it. Peak RSS and CPU time are those of the stage's process",
        "tree, sampled every 100 ms. The machine is shared: wall times stretch with the load average; CPU seconds much less so.",
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
    if notes:
        lines += [notes]
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.sf10", description=__doc__.split("\n\n")[0])
    p.add_argument("--scale-factor", type=float, default=10.0)
    p.add_argument("--commit-rows", type=int, default=10_000_000, help="rows per commit of the write stage")
    p.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    p.add_argument("--cache", default=str(ROOT / ".tmp" / "tpch-cache"), help="where the generated rows are cached")
    p.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a temp dir, removed)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--report", type=Path, default=ROOT / "bench" / "REPORT-sf10.md")
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
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="lakestore-sf10-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    spec = {
        "scale_factor": args.scale_factor,
        "cache": str(Path(args.cache).resolve()),
        "warehouse": str(workdir / "warehouse"),
        "commit_rows": args.commit_rows,
        "workdir": str(workdir),
    }
    if "write" in stages:
        shutil.rmtree(spec["warehouse"], ignore_errors=True)  # a second write would be upserts
    try:
        for stage in stages:
            results[stage] = sf1.timed_stage(stage, spec, args.timeout, module="bench.sf10")
            if "error" in results[stage]:
                break
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    previous = args.report.read_text() if args.report.exists() else None
    args.report.write_text(markdown(args, results, previous))
    print(f"report written to {args.report}")
    return 0 if all("error" not in r for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
