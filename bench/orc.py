"""ORC data files: lakestore's ORC write and read against pyarrow's own ORC write and read of the
same rows (append table, one file, zstd), and the merge-on-read of an ORC primary-key table
against the parquet one (two overlapping commits, one bucket). Every measurement runs in a fresh
process; the cases are interleaved over the repetitions; the median and the minimum are reported
(the minimum is the least disturbed run when other work shares the machine).

    python -m bench.orc --rows 200000 --reps 5
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

CASES = ("pyarrow_orc_write", "lakestore_orc_write", "pyarrow_orc_read", "lakestore_orc_read", "merge_read_orc", "merge_read_parquet")


def rows(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "v": pa.array(rng.integers(0, 1_000_000, n)),
            "d": pa.array(rng.random(n)),
            "s": pa.array([f"name-{i % 5000}" for i in range(n)]),
            "ts": pa.array(rng.integers(1_600_000_000_000_000, 1_700_000_000_000_000, n)).cast(pa.timestamp("us")),
        }
    )


def prepare(root: Path, n: int) -> None:
    import pyarrow.orc as po

    import lakestore

    data = rows(n)
    po.write_table(data, str(root / "plain.orc"), compression="zstd")
    catalog = lakestore.Catalog(str(root / "wh"))
    catalog.create_database("db")
    catalog.create_table("db.orc_read", schema=data.schema, options={"file.format": "orc"}).write_arrow(data)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), *list(data.schema)[1:]])
    for fmt in ("orc", "parquet"):
        table = catalog.create_table(f"db.merge_{fmt}", schema=schema, primary_keys=["id"], options={"bucket": "1", "file.format": fmt})
        table.write_arrow(data.cast(schema))
        table.write_arrow(rows(n, seed=1).cast(schema).slice(0, n // 2))  # overlapping keys: a merge on read


def child(case: str, root: Path, n: int) -> float:
    """Seconds of one ``case`` in this process."""
    import pyarrow.orc as po

    import lakestore

    data = rows(n) if case.endswith("write") else None
    catalog = lakestore.Catalog(str(root / "wh"))
    target = None
    if case == "lakestore_orc_write":  # the table exists before the clock starts, as pyarrow's folder does
        assert data is not None
        target = catalog.create_table(f"db.w{time.monotonic_ns()}", schema=data.schema, options={"file.format": "orc"})
    start = time.perf_counter()
    if case == "pyarrow_orc_write":
        po.write_table(data, str(root / "tmp.orc"), compression="zstd")
    elif case == "lakestore_orc_write":
        assert target is not None and data is not None
        target.write_arrow(data)  # the file, its statistics, manifests and the snapshot
    elif case == "pyarrow_orc_read":
        po.read_table(str(root / "plain.orc"))
    elif case == "lakestore_orc_read":
        catalog.get_table("db.orc_read").to_arrow()
    elif case == "merge_read_orc":
        catalog.get_table("db.merge_orc").to_arrow()
    elif case == "merge_read_parquet":
        catalog.get_table("db.merge_parquet").to_arrow()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--child", choices=CASES)
    parser.add_argument("--root")
    args = parser.parse_args()
    if args.child:
        print(json.dumps({"seconds": child(args.child, Path(args.root), args.rows)}))
        return
    root = Path(tempfile.mkdtemp(prefix="bench-orc-"))
    try:
        prepare(root, args.rows)
        times: dict[str, list[float]] = {c: [] for c in CASES}
        for _ in range(args.reps):
            for case in CASES:
                out = subprocess.run(
                    [sys.executable, "-m", "bench.orc", "--child", case, "--root", str(root), "--rows", str(args.rows)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                times[case].append(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])
        median = {c: statistics.median(v) for c, v in times.items()}
        best = {c: min(v) for c, v in times.items()}  # on a shared machine the least disturbed run
        for case in CASES:
            runs = " ".join(f"{t * 1000:.0f}" for t in times[case])
            print(f"{case:22s} median {median[case] * 1000:8.1f} ms  min {best[case] * 1000:8.1f} ms  runs {runs}")
        for label, a, b in (
            ("ORC write  lakestore / pyarrow", "lakestore_orc_write", "pyarrow_orc_write"),
            ("ORC read   lakestore / pyarrow", "lakestore_orc_read", "pyarrow_orc_read"),
            ("merge read ORC / parquet      ", "merge_read_orc", "merge_read_parquet"),
        ):
            print(f"{label}: median {median[a] / median[b]:.2f}x  min {best[a] / best[b]:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
