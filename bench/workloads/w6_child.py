"""Child process of workload 6 (so ru_maxrss is this write's peak alone):

    python -m bench.workloads.w6_child INPUT.arrows WAREHOUSE

Streams the Arrow IPC stream batch by batch into one primary-key write with the default write
buffer and prints one JSON line: seconds, rows, peak and baseline RSS."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import pyarrow as pa

from bench.lakeside import create_table


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main(argv: list[str]) -> int:
    source, warehouse = argv[1], Path(argv[2])
    table = create_table(warehouse, "w6")
    baseline = _rss_kib()
    with pa.OSFile(source, "rb") as fh:
        reader = pa.ipc.open_stream(fh)
        start = time.perf_counter()
        snapshot = table.write_arrow(reader)
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    files = sum(len(s.files) for s in table.scan().plan())
    print(
        json.dumps(
            {
                "seconds": seconds,
                "rows": snapshot.total_record_count if snapshot else 0,
                "peak_rss_kib": peak,
                "baseline_rss_kib": baseline,
                "files": files,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
