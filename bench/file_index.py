"""Bloom-filter file indexes: a filtered point read (``s == <one value>``) of an append table of
several files whose statistics cannot rule any file out (random strings: every file's min/max
spans nearly the whole range), with and without a bloom-filter index on ``s``: in ``.index``
files (the default ``file-index.in-manifest-threshold`` of 500 bytes) and embedded in the
manifest (threshold 1 mb). Also the write of one file into each table (the index's cost).

Every measurement runs in a fresh process; the cases are interleaved over the repetitions; the
median and the minimum are reported with the load average (1 min) before each repetition.

    python -m bench.file_index --files 20 --rows-per-file 50000 --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

TABLES = {
    "plain": {},
    "index_file": {"file-index.bloom-filter.columns": "s"},
    "embedded": {"file-index.bloom-filter.columns": "s", "file-index.in-manifest-threshold": "1 mb"},
}
CASES = tuple(f"read_{t}" for t in TABLES) + tuple(f"write_{t}" for t in TABLES)


def batch(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 2**62, n)
    return pa.table({"id": pa.array(ids), "s": pa.array([f"{x:016x}" for x in ids.tolist()]), "v": pa.array(rng.random(n))})


def options(name: str, rows_per_file: int) -> dict[str, str]:
    opts = {"write-only": "true", **TABLES[name]}  # no compaction: one file per write
    if "file-index.bloom-filter.columns" in opts:
        opts |= {"file-index.bloom-filter.s.items": str(rows_per_file), "file-index.bloom-filter.s.fpp": "0.01"}
    return opts


def prepare(root: Path, files: int, rows_per_file: int) -> str:
    """The tables, the same rows in each; returns the value the point reads look for."""
    import lakestore

    catalog = lakestore.Catalog(str(root / "wh"))
    catalog.create_database("db")
    batches = [batch(rows_per_file, seed) for seed in range(files)]
    for name in TABLES:
        table = catalog.create_table(f"db.{name}", schema=batches[0].schema, options=options(name, rows_per_file))
        for b in batches:
            table.write_arrow(b)
    return str(batches[files // 2].column("s")[7].as_py())


def child(case: str, root: Path, value: str, rows_per_file: int) -> dict[str, float]:
    import lakestore
    from lakestore import col

    catalog = lakestore.Catalog(str(root / "wh"))
    kind, name = case.split("_", 1)
    table = catalog.get_table(f"db.{name}")
    if kind == "write":
        data = batch(rows_per_file, seed=10_000 + time.monotonic_ns() % 1000)
        start = time.perf_counter()
        table.write_arrow(data)
        return {"seconds": time.perf_counter() - start}
    seconds = []
    for _ in range(2):  # the first read in the process, then a warm one
        start = time.perf_counter()
        scan = table.scan().filter(col("s") == value)
        plan = scan.plan()
        rows = scan.to_arrow()
        seconds.append(time.perf_counter() - start)
        assert rows.num_rows == 1, rows.num_rows
    files = sum(len(s.files) for s in plan)
    return {"seconds": seconds[0], "warm": seconds[1], "files_read": files, "files_skipped_by_index": plan.files_skipped_by_index}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rows-per-file", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--child", choices=CASES)
    parser.add_argument("--root")
    parser.add_argument("--value")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, Path(args.root), args.value, args.rows_per_file)))
        return
    root = Path(tempfile.mkdtemp(prefix="bench-file-index-"))
    try:
        value = prepare(root, args.files, args.rows_per_file)
        times: dict[str, list[float]] = {c: [] for c in CASES}
        warm: dict[str, list[float]] = {c: [] for c in CASES}
        facts: dict[str, dict[str, float]] = {}
        loads = []
        for _ in range(args.reps):
            loads.append(os.getloadavg()[0])
            for case in CASES:
                out = subprocess.run(
                    [sys.executable, "-m", "bench.file_index", "--child", case, "--root", str(root), "--value", value]
                    + ["--rows-per-file", str(args.rows_per_file)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                result = json.loads(out.stdout.strip().splitlines()[-1])
                times[case].append(result.pop("seconds"))
                if "warm" in result:
                    warm[case].append(result.pop("warm"))
                facts[case] = result
        loads.append(os.getloadavg()[0])
        print(f"{args.files} files x {args.rows_per_file} rows; load (1 min) per repetition: {' '.join(f'{x:.1f}' for x in loads)}")
        for case in CASES:
            runs = " ".join(f"{t * 1000:.0f}" for t in times[case])
            extra = " ".join(f"{k}={v}" for k, v in facts[case].items())
            if warm[case]:
                w = warm[case]
                extra += f"  warm (2nd read in the process) median {statistics.median(w) * 1000:.1f} ms min {min(w) * 1000:.1f} ms"
            print(
                f"{case:20s} median {statistics.median(times[case]) * 1000:8.1f} ms  min {min(times[case]) * 1000:8.1f} ms"
                f"  runs {runs}  {extra}"
            )
        for t in ("index_file", "embedded"):
            for kind, source in (("read", times), ("warm read", warm), ("write", times)):
                a, b = source[f"{kind.split()[-1]}_{t}"], source[f"{kind.split()[-1]}_plain"]
                print(f"{kind} {t} / plain: median {statistics.median(a) / statistics.median(b):.2f}x  min {min(a) / min(b):.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
