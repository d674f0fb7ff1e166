"""Load on ``lakestore serve`` over loopback: N writers (lakestore's REST catalog client,
threads of one process) commit one-row batches to M tables for a bounded time through the
server's commit endpoint; reports commits per second and commit latency percentiles, and checks
that every acknowledged commit is in its table exactly once. Then it replays the server's commit
validation (``lakestore.commit.validate``, with the server's cache of validated manifests) over
every snapshot the run committed and reports its cost per commit, and the cost without the
cache (every manifest of the table read) for the last snapshot.

    python -m bench.rest_load [--writers 4] [--tables 2] [--seconds 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa

import lakestore
from lakestore.commit.validate import SnapshotValidator, ValidatedManifests
from tests.rest.server import start_server

SCHEMA = pa.schema([("writer", pa.int64()), ("seq", pa.int64())])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--tables", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args(argv)
    server = start_server(Path(tempfile.mkdtemp(prefix="rest-load-")))
    try:
        options = {"metastore": "rest", "uri": server.uri, "token": server.admin_token}
        admin = lakestore.Catalog("lakestore", options=options)
        admin.create_database("load", exist_ok=True)
        for t in range(args.tables):
            admin.create_table(f"load.t{t}", schema=SCHEMA, options={"write-only": "true"}, exist_ok=True)
        latencies: list[float] = []
        acked: dict[int, list[tuple[int, int]]] = {}
        lock = threading.Lock()
        stop = time.monotonic() + args.seconds

        def writer(n: int) -> None:
            table = lakestore.Catalog("lakestore", options=options).get_table(f"load.t{n % args.tables}")
            seq = 0
            while time.monotonic() < stop:
                started = time.perf_counter()
                table.write_arrow(pa.table({"writer": [n], "seq": [seq]}, schema=SCHEMA))
                with lock:
                    latencies.append(time.perf_counter() - started)
                    acked.setdefault(n % args.tables, []).append((n, seq))
                seq += 1

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(args.writers)]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
        for t, rows in acked.items():
            data = admin.get_table(f"load.t{t}").to_arrow()
            counts = Counter(zip(data["writer"].to_pylist(), data["seq"].to_pylist(), strict=True))
            assert all(counts[row] == 1 for row in rows) and sum(counts.values()) == len(rows), f"table t{t}: not exactly once"
        q = statistics.quantiles(latencies, n=100)
        print(
            f"{len(latencies)} commits by {args.writers} writers on {args.tables} tables in {elapsed:.1f} s: "
            f"{len(latencies) / elapsed:.1f} commits/s; write+commit latency p50 {q[49] * 1000:.0f} ms, "
            f"p95 {q[94] * 1000:.0f} ms, p99 {q[98] * 1000:.0f} ms; every acknowledged commit exactly once"
        )
        validation_cost([admin.get_table(f"load.t{t}") for t in range(args.tables)])
    finally:
        server.stop()
    return 0


def validation_cost(tables: list[lakestore.Table]) -> None:
    """The server's validation of each committed snapshot, in commit order, as the server ran it
    (one cache of validated manifests); then the last snapshot of each table with an empty cache."""
    warm: list[float] = []
    cold: list[float] = []
    for table in tables:
        table = lakestore.Table(table.path)  # the files themselves, as the server opens them
        ids = set(table.store.schema_manager.list_ids())
        cache = ValidatedManifests()
        snapshots = table.snapshots()
        for snapshot in snapshots:
            started = time.perf_counter()
            SnapshotValidator(table.store.file_io, table.path, table.schema, cache=cache).validate(snapshot, schema_ids=ids)
            warm.append(time.perf_counter() - started)
        started = time.perf_counter()
        SnapshotValidator(table.store.file_io, table.path, table.schema).validate(snapshots[-1], schema_ids=ids)
        cold.append(time.perf_counter() - started)
    q = statistics.quantiles(warm, n=100)
    print(
        f"commit validation over {len(warm)} snapshots: p50 {q[49] * 1000:.2f} ms, p95 {q[94] * 1000:.2f} ms, "
        f"p99 {q[98] * 1000:.2f} ms per commit; without the cache (whole table) "
        f"{max(cold) * 1000:.1f} ms for {max(len(t.snapshots()) for t in tables)} snapshots' manifests"
    )


if __name__ == "__main__":
    sys.exit(main())
