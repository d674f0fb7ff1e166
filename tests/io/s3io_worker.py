"""Child-process jobs of the object-storage tests (``python s3io_worker.py <mode> <warehouse> <options-json> ...``).

Each mode is one independent writer process: its own S3 client, its own lock connection.
"""

from __future__ import annotations

import json
import os
import signal
import sys

import pyarrow as pa

import lakestore
from lakestore.io.s3 import S3FileIO

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])


def rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"p{i % 2}" for i in ids], "v": [f"{tag}-{i}" for i in ids]}, schema=SCHEMA)


def append(warehouse: str, options: dict, writer: int, commits: int) -> None:
    """``commits`` commits of 2 rows each, unique ids per writer and commit; prints landed snapshot ids."""
    table = lakestore.Catalog(warehouse, options=options).get_table("db.t")
    landed = []
    for i in range(commits):
        ids = [writer * 100_000 + i * 10 + k for k in range(2)]
        snap = table.write_arrow(rows(ids, f"w{writer}"), commit_user=f"writer-{writer}", commit_identifier=i)
        landed.append(snap.id)
    print(json.dumps(landed))


def die_holding_lock(warehouse: str, options: dict) -> None:
    """Start a commit and SIGKILL this process once it holds the catalog lock, just before it
    would publish the snapshot: the lock row stays behind, as after a crash or an OOM kill."""
    table = lakestore.Catalog(warehouse, options=options).get_table("db.t")

    def killed(self, path, data):  # runs inside run_with_lock (the publisher holds the lock around it)
        if "/snapshot/" in path:
            print("holding", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, path, data)

    original = S3FileIO.try_publish_under_lock
    S3FileIO.try_publish_under_lock = killed
    table.write_arrow(rows([999_999], "doomed"), commit_user="doomed", commit_identifier=0)
    raise AssertionError("unreachable: the process was to be killed while holding the lock")


if __name__ == "__main__":
    mode, warehouse, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if mode == "append":
        append(warehouse, options, int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "die_holding_lock":
        die_holding_lock(warehouse, options)
    else:
        raise SystemExit(f"unknown mode {mode}")
