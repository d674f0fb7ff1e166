"""Peak memory of reading a table, each read mode in a fresh child process (so ``ru_maxrss`` is
that read's peak alone):

    python -m bench.read_rss TABLE_PATH [--modes to_batches,to_arrow]

Prints one JSON line per mode: rows, seconds, peak and baseline RSS (MiB)."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(path: str, mode: str) -> dict[str, object]:
    import lakestore  # noqa: PLC0415 - the child's own import, measured in its baseline

    table = lakestore.Table.from_path(path)
    baseline = _rss_mib()
    start = time.perf_counter()
    rows = 0
    if mode == "to_batches":
        for batch in table.to_batches():
            rows += batch.num_rows
    else:
        rows = table.to_arrow().num_rows
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {
        "mode": mode,
        "rows": rows,
        "seconds": round(seconds, 3),
        "peak_rss_mib": round(peak, 1),
        "baseline_rss_mib": round(baseline, 1),
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.read_rss", description=__doc__)
    p.add_argument("table")
    p.add_argument("--modes", default="to_batches,to_arrow")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.table, args.child)))
        return 0
    for mode in args.modes.split(","):
        out = subprocess.run(
            [sys.executable, "-m", "bench.read_rss", args.table, "--child", mode], capture_output=True, text=True, check=True
        )
        print(out.stdout.strip().splitlines()[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
