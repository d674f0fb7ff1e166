"""Workload 8: a deletion-vector table (``deletion-vectors.enabled``): the workload-1 upserts
written by lakestore (each commit moves level 0 up and marks the older versions in vectors),
then read with the vectors applied and no merge, against ``pyarrow.parquet.read_table`` of the
same live files (which returns the deleted rows too)."""

from __future__ import annotations

import pyarrow.parquet as pq

import lakestore
from bench import data
from bench.common import LAKESTORE, PYARROW, Context, Target, WorkloadResult, repeat
from bench.lakeside import create_table, live_file_paths
from lakestore.read.deletion_vectors import read_index_files

NUMBER = 8
TITLE = "Deletion-vector table: workload-1 upserts, then a read with vectors applied vs pyarrow.parquet.read_table"
WRITE = "write 4 commits"
READ = "full read"
OPTIONS = {**data.OPTIONS, "deletion-vectors.enabled": "true"}


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    commits = data.upsert_commits(data.UPSERT_PLAN, ctx.scale)

    written: list[lakestore.Table] = []

    def fresh(i: int) -> lakestore.Table:
        written.append(create_table(ctx.scratch(f"w8-{i}"), "w8", OPTIONS))
        return written[-1]

    m, _ = repeat(LAKESTORE, ctx.reps, fresh, lambda table: [table.write_arrow(c) for c in commits])
    res.add(WRITE, m)
    table = lakestore.Table.from_path(written[-1].path)
    files = live_file_paths(table)
    vectors = sum(len(f.ranges) for f in read_index_files(table.store.file_io, table.path, table.latest_snapshot()))
    res.facts.append(("live files / files with a vector", f"{len(files)} / {vectors}"))
    m, out = repeat(LAKESTORE, ctx.reps, lambda i: None, lambda _: table.to_arrow())
    res.add(READ, m)
    rows = out.num_rows
    m, out = repeat(PYARROW, ctx.reps, lambda i: None, lambda _: pq.read_table(files, partitioning=None))
    m.note = "pq.read_table(list of the live files): all columns incl. system columns, deleted rows included"
    res.add(READ, m)
    res.facts.append(("rows", f"{rows:,} live of {out.num_rows:,} in the files"))
    floor = res.speed_ratio(READ, PYARROW)
    res.targets.append(Target("W8 deletion-vector read: lakestore speed vs raw pyarrow", floor.value, ">=", 0.9))
    return res
