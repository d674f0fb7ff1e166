"""A committer SIGKILLed while it holds the catalog lock on an S3 table: the lock row stays
behind, the other writers wait until it expires, take it over, and every commit lands."""

from __future__ import annotations

import json
import signal
import sqlite3
import time

import pyarrow as pa
from s3io_worker import rows
from test_s3_concurrency import make_table, run_writers, spawn

import lakestore


def test_killed_lock_holder_is_taken_over_after_expiry(s3_server, bucket, tmp_path):
    lock_db = tmp_path / "locks.db"
    expire_s = 2
    options = s3_server.options(
        **{
            "lock.enabled": "true",
            "uri": f"jdbc:sqlite:{lock_db}",
            "lock.expire-time": f"{expire_s} s",
            "lock-acquire-timeout": "60 s",
            "lock-check-max-sleep": "200 ms",
        }
    )
    warehouse = f"s3://{bucket}/wh"
    table = make_table(warehouse, options)

    doomed = spawn("die_holding_lock", warehouse, json.dumps(options))
    out, err = doomed.communicate(timeout=120)
    assert doomed.returncode == -signal.SIGKILL, err[-2000:]
    assert out.strip() == "holding"
    killed_at = time.monotonic()
    with sqlite3.connect(lock_db) as conn:
        assert conn.execute("SELECT lock_id FROM paimon_distributed_locks").fetchall() == [("jdbc.db.t",)]
    assert table.snapshots() == []  # it died before publishing

    landed = run_writers(warehouse, options, writers=2, commits=5)
    # nobody could publish before the dead holder's lock expired
    assert time.monotonic() - killed_at >= expire_s
    snaps = table.snapshots()
    assert [s.id for s in snaps] == list(range(1, 11))
    assert sorted(i for ids in landed for i in ids) == list(range(1, 11))
    with sqlite3.connect(lock_db) as conn:
        assert conn.execute("SELECT count(*) FROM paimon_distributed_locks").fetchone() == (0,)

    # the killed writer retries its commit (same user and identifier): it lands exactly once
    retry = lakestore.Catalog(warehouse, options=options).get_table("db.t")
    snap = retry.write_arrow(rows([999_999], "doomed"), commit_user="doomed", commit_identifier=0)
    assert snap.id == 11
    ids = sorted(table.to_arrow().column("id").to_pylist())
    assert ids == sorted([w * 100_000 + i * 10 + k for w in range(2) for i in range(5) for k in range(2)] + [999_999])
    assert pa.compute.sum(pa.array([s.delta_record_count for s in table.snapshots()])).as_py() == len(ids)
