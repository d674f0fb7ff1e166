"""Child processes of workload 4's memory measurement (so ru_maxrss is one step's peak alone):

    python -m bench.workloads.w4_child setup WAREHOUSE ROWS   # one-bucket table, 5 sorted runs
    python -m bench.workloads.w4_child compact TABLE_PATH     # full compaction

``setup`` prints the table path; ``compact`` prints one JSON line: seconds, rows, files, peak and
baseline RSS."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

import lakestore
from bench import data


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def setup(warehouse: str, rows: int) -> str:
    """The 5 runs of ``data.COMPACTION_PLAN`` scaled to ``rows`` rows, in one bucket, without
    compaction; primary key (dt, id) without partitions, so the key has two columns."""
    catalog = lakestore.Catalog(warehouse)
    catalog.create_database("bench", exist_ok=True)
    table = catalog.create_table(
        "bench.w4_one_bucket", schema=data.SCHEMA, primary_keys=list(data.PRIMARY_KEYS), options={"bucket": "1", "write-only": "true"}
    )
    scale = rows / sum(n + u for n, u in data.COMPACTION_PLAN)
    plan = [(int(n * scale), int(u * scale)) for n, u in data.COMPACTION_PLAN]
    rng = np.random.default_rng(4)
    pool = rng.permutation(np.arange(sum(n for n, _ in plan), dtype=np.int64) * 7 + 1_000_000_000)
    written = 0
    for version, (n_new, n_upd) in enumerate(plan, start=1):
        updates = rng.choice(pool[:written], size=min(n_upd, written), replace=False) if n_upd and written else np.empty(0, np.int64)
        table.write_arrow(data.rows_for(np.concatenate([pool[written : written + n_new], updates]), version, rng))
        written += n_new
    return table.path


def compact(path: str) -> dict[str, float]:
    table = lakestore.Table.from_path(path)
    baseline = _rss_kib()
    start = time.perf_counter()
    table.compact(full=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    after = lakestore.Table.from_path(path)
    snapshot = after.latest_snapshot()
    assert snapshot is not None
    return {
        "seconds": seconds,
        "rows": snapshot.total_record_count,
        "files": len(after.store.live_files()),
        "peak_rss_kib": peak,
        "baseline_rss_kib": baseline,
    }


def main(argv: list[str]) -> int:
    if argv[1] == "setup":
        print(setup(argv[2], int(argv[3])))
    else:
        print(json.dumps(compact(argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
