"""Workload 5: latency of small commits as the table grows to 1000 snapshots.

The target compares the commit itself (``TableCommit.commit`` of one small append) into the
table with 1000 prior commits and into a table with 10 prior commits, the two probed in turn
(same data, same moment, so machine load hits both alike). Probes write with a non-compacting
writer: every probe commits one APPEND snapshot of level-0 files, while a writer's own
compaction would add a COMPACT snapshot to some commits and not others. Write + commit of every
commit (``write_arrow``, with the writer's compaction) is reported too, as for the peers.
"""

from __future__ import annotations

import statistics
import uuid

import pyarrow as pa

import lakestore
from bench import data
from bench.common import LAKESTORE, PYPAIMON, PYPAIMON_RUST, Context, Measurement, Ratio, Target, WorkloadResult, profile_to, timed
from bench.lakeside import create_table
from lakestore.write.table_write import TableWrite

NUMBER = 5
TITLE = "Commit latency as the table grows to 1000 snapshots (small commits)"
ROWS_PER_COMMIT = 100
EARLY = "commit 10 (median of 6..15)"
WINDOW = 10  # "commit 10" = median of commits 6..15, "commit N" = median of the last 10
PROBES = 20  # probe commits into each of the two tables
SMALL = 10  # prior commits of the small table


def _windows(times: list[float]) -> tuple[list[float], list[float]]:
    return times[max(0, 10 - WINDOW // 2 - 1) : 10 + WINDOW // 2], times[-WINDOW:]


def _add(res: WorkloadResult, label: str, times: list[float], n: int) -> tuple[float, float]:
    early, late = _windows(times)
    res.add(EARLY, Measurement(label, early))
    res.add(f"commit {n} (median of last {WINDOW})", Measurement(label, late))
    return statistics.median(early), statistics.median(late)


def _probe(table: lakestore.Table, rows: pa.Table) -> float:
    """Seconds of the commit of one small append (written untimed, without compaction)."""
    user = str(uuid.uuid4())
    write = TableWrite(table.store.file_io, table.path, table.schema, table.store.manifests(), table.latest_snapshot(), commit_user=user)
    write.write_arrow(rows)
    messages = write.prepare_commit()
    seconds, _ = timed(lambda: table.new_commit(commit_user=user).commit(messages))
    return seconds


def _probe_both(small: lakestore.Table, big: lakestore.Table, n: int) -> tuple[list[float], list[float]]:
    small_times, big_times = [], []
    for j in range(PROBES):
        rows = data.small_commit(n + WINDOW + j, ROWS_PER_COMMIT)
        first, second = (small, big) if j % 2 == 0 else (big, small)
        t1, t2 = _probe(first, rows), _probe(second, rows)
        small_times.append(t1 if first is small else t2)
        big_times.append(t2 if first is small else t1)
    return small_times, big_times


def run(ctx: Context) -> WorkloadResult:
    res = WorkloadResult(NUMBER, TITLE)
    n = max(2 * WINDOW + 5, ctx.rows(1000))
    folder = ctx.scratch("w5-input")
    commits = [data.small_commit(i, ROWS_PER_COMMIT) for i in range(n)]
    table = create_table(ctx.scratch("w5-lakestore"), "w5")
    times = [timed(lambda c=c: table.write_arrow(c))[0] for c in commits]
    early, late = _add(res, LAKESTORE, times, n)
    snap = table.latest_snapshot()
    res.facts.append(
        (
            "commits",
            f"{n} commits of {ROWS_PER_COMMIT} rows (one partition each); latest snapshot id {snap.id},"
            " kinds appended+compact as the writer decides",
        )
    )
    res.facts.append(
        ("lakestore per commit (write_arrow: write + commit)", f"commit 10: {early * 1000:.1f} ms, commit {n}: {late * 1000:.1f} ms")
    )
    res.ratios.append(Ratio(f"lakestore write+commit {n} / write+commit 10 latency", late / early))
    small = create_table(ctx.scratch("w5-lakestore-small"), "w5")
    for c in commits[:SMALL]:
        small.write_arrow(c)
    small_times, big_times = _probe_both(small, table, n)
    commit_small, commit_big = statistics.median(small_times), statistics.median(big_times)
    res.add(f"commit into a table of {SMALL} commits", Measurement(LAKESTORE, small_times, note="TableCommit.commit of one probe"))
    res.add(f"commit into a table of {n} commits", Measurement(LAKESTORE, big_times, note="TableCommit.commit of one probe"))
    res.facts.append(
        (
            "lakestore commit only (median of interleaved probes)",
            f"{SMALL} prior commits: {commit_small * 1000:.1f} ms, {n} prior commits: {commit_big * 1000:.1f} ms",
        )
    )
    res.targets.append(
        Target(
            f"W5 commit into {n} prior commits / into {SMALL} prior commits",
            commit_big / commit_small,
            "<=",
            1.3,
            note="" if n >= 1000 else f"quick run: {n} snapshots, not 1000",
        )
    )
    if ctx.oracle is not None:
        paths = [str(data.write_ipc(c, folder / f"c-{i}.arrow")) for i, c in enumerate(commits)]
        for label, mode in ((PYPAIMON, "python"), (PYPAIMON_RUST, "native")):
            try:
                out = ctx.oracle.run(
                    "commit_latency",
                    commits=paths,
                    warehouse=str(ctx.scratch(f"w5-{mode}")),
                    mode=mode,
                    primary_keys=list(data.PRIMARY_KEYS),
                    partition_keys=list(data.PARTITION_KEYS),
                    options=data.OPTIONS,
                )
            except Exception as exc:  # noqa: BLE001
                res.notes.append(f"{label} failed: {exc}")
                continue
            p_early, p_late = _add(res, label, out["times"], n)
            res.ratios.append(Ratio(f"{label} commit {n} / commit 10 latency", p_late / p_early))
    if ctx.profile_dir is not None:
        extra = [data.small_commit(n + i, ROWS_PER_COMMIT) for i in range(WINDOW)]
        profile_to(ctx.profile_dir / "w5_commit_latency.txt", lambda: [table.write_arrow(c) for c in extra])
    return res
