"""A separate process for the HiveCatalogLock tests (``python -m tests.hive.hive_worker``):

- ``commit <options-json> <warehouse> <table> <worker> <commits>``: opens the table through the
  Hive catalog and appends ``commits`` one-row commits (id = worker * 100000 + i), printing
  ``committed <i>`` after each;
- ``hold <options-json> <database> <table>``: takes the metastore's table lock, prints ``held``
  and sleeps until killed (never unlocks: the reaper must free it).
"""

from __future__ import annotations

import json
import sys
import time

import pyarrow as pa

import lakestore
from lakestore.io.hive_lock import HiveCatalogLock


def commit(options: dict[str, str], warehouse: str, identifier: str, worker: int, commits: int) -> None:
    table = lakestore.Catalog(warehouse, options=options).get_table(identifier)
    print("ready", flush=True)
    for i in range(commits):
        table.write_arrow(pa.table({"id": pa.array([worker * 100_000 + i], pa.int64()), "worker": pa.array([worker], pa.int32())}))
        print(f"committed {i} {time.time():.3f}", flush=True)


def hold(options: dict[str, str], database: str, table: str) -> None:
    lock = HiveCatalogLock.from_options(options)
    with lock.hold(database, table):
        print(f"held {time.time():.3f}", flush=True)
        time.sleep(600)


if __name__ == "__main__":
    mode, options = sys.argv[1], json.loads(sys.argv[2])
    if mode == "commit":
        commit(options, sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    elif mode == "hold":
        hold(options, sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(f"unknown mode {mode!r}")
