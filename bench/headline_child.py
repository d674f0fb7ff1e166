"""One fresh process of the headline workload (W9) for lakestore or the pyarrow floor:

    python -m bench.headline_child SPEC.json

SPEC: {"mode": "lakestore" | "pyarrow", "commits": [IPC files], "warehouse": dir, "rounds": n}.
Each round writes the commits into a fresh table (pyarrow: one zstd parquet file per commit) and
reads it back (lakestore: merge-on-read; pyarrow: a plain read of the files, no merge). Round 0
is the first run in this process. Prints one JSON line: per-round write and read seconds (wall and
CPU), rows read, start-up seconds (interpreter start to inputs loaded) and peak RSS."""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.lakeside import create_table


def _read_ipc(path: str) -> pa.Table:
    with pa.memory_map(path, "r") as src:
        return pa.ipc.open_file(src).read_all()


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of all this process's threads, result)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def _lakestore_round(commits: list[pa.Table], warehouse: Path, i: int) -> dict[str, Any]:
    table = create_table(warehouse, f"h_{i}")
    w, wc, _ = _timed(lambda: [table.write_arrow(c) for c in commits])
    r, rc, rows = _timed(lambda: table.to_arrow().num_rows)
    return {"write": w, "write_cpu": wc, "read": r, "read_cpu": rc, "rows": rows}


def _pyarrow_round(commits: list[pa.Table], warehouse: Path, i: int) -> dict[str, Any]:
    folder = warehouse / f"h_{i}"
    folder.mkdir(parents=True)
    files = [folder / f"commit-{n}.parquet" for n in range(len(commits))]
    w, wc, _ = _timed(lambda: [pq.write_table(c, f, compression="zstd") for c, f in zip(commits, files, strict=True)])
    r, rc, rows = _timed(lambda: pq.read_table([str(f) for f in files], partitioning=None).num_rows)
    return {"write": w, "write_cpu": wc, "read": r, "read_cpu": rc, "rows": rows}


def main(argv: list[str]) -> int:
    spec: dict[str, Any] = json.loads(Path(argv[1]).read_text())
    commits = [_read_ipc(p) for p in spec["commits"]]
    startup = time.time() - float(spec["spawned_at"]) if spec.get("spawned_at") else None
    warehouse = Path(spec["warehouse"])
    one_round = _lakestore_round if spec["mode"] == "lakestore" else _pyarrow_round
    rounds = [one_round(commits, warehouse, i) for i in range(int(spec.get("rounds", 1)))]
    out: dict[str, Any] = {k: [r[k] for r in rounds] for k in ("write", "write_cpu", "read", "read_cpu")}
    out.update(rows=rounds[-1]["rows"], startup_s=startup, peak_rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
