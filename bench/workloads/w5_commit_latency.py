"""Workload 5: latency of small commits as the table grows to 1000 snapshots."""

from __future__ import annotations

import statistics

from bench import data
from bench.common import LAKESTORE, PYPAIMON, PYPAIMON_RUST, Context, Measurement, Ratio, Target, WorkloadResult, profile_to, timed
from bench.lakeside import create_table

NUMBER = 5
TITLE = "Commit latency as the table grows to 1000 snapshots (small commits)"
ROWS_PER_COMMIT = 100
EARLY = "commit 10 (median of 6..15)"
WINDOW = 10  # "commit 10" = median of commits 6..15, "commit N" = median of the last 10


def _windows(times: list[float]) -> tuple[list[float], list[float]]:
    return times[max(0, 10 - WINDOW // 2 - 1) : 10 + WINDOW // 2], times[-WINDOW:]


def _add(res: WorkloadResult, label: str, times: list[float], n: int) -> tuple[float, float]:
    early, late = _windows(times)
    res.add(EARLY, Measurement(label, early))
    res.add(f"commit {n} (median of last {WINDOW})", Measurement(label, late))
    return statistics.median(early), statistics.median(late)


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
    res.ratios.append(Ratio(f"lakestore commit {n} / commit 10 latency", late / early))
    res.targets.append(
        Target(
            f"W5 commit {n} latency / commit 10 latency",
            late / early,
            "<=",
            2,
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
