"""Child process of workload 2: a process's FIRST read, which pays what a long-lived process
pays once (lazy imports, thread pools, first use of the file system):

    python -m bench.workloads.w2_child TABLE_PATH {lakestore|pyarrow}

The engine's modules are imported and the table opened before the clock starts (as the peers'
runner does); prints one JSON line {"seconds": first read, "rows": n, "import_seconds": ...}."""

from __future__ import annotations

import gc
import json
import sys
import time


def main(argv: list[str]) -> int:
    path, engine = argv[1], argv[2]
    start = time.perf_counter()
    if engine == "lakestore":
        import lakestore  # noqa: PLC0415 - the import is measured separately

        table = lakestore.Table.from_path(path)
        imported = time.perf_counter() - start
        read = table.to_arrow
    else:
        import pyarrow.parquet as pq  # noqa: PLC0415

        import lakestore  # noqa: PLC0415 - only to list the live files, before the clock
        from bench.lakeside import live_file_paths  # noqa: PLC0415

        files = live_file_paths(lakestore.Table.from_path(path))
        imported = time.perf_counter() - start

        def read():  # type: ignore[no-untyped-def]
            return pq.read_table(files, partitioning=None)

    gc.collect()
    start = time.perf_counter()
    out = read()
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rows": out.num_rows, "import_seconds": imported}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
