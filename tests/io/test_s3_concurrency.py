"""Several real processes committing to one table on the S3 server at once: every commit lands
exactly once, whichever safe-publish mechanism is configured."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from s3io_worker import SCHEMA

import lakestore

WORKER = str(Path(__file__).resolve().parent / "s3io_worker.py")
WRITERS = 4
COMMITS = 25
# many small commits racing: retry quickly and often rather than give up
TABLE_OPTIONS = {
    "commit.min-retry-wait": "1 ms",
    "commit.max-retry-wait": "50 ms",
    "commit.max-retries": "200",
    "write-only": "true",
    # few manifests per snapshot: every commit reads them all, and each read is an HTTP request
    "manifest.merge-min-count": "4",
}


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, WORKER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def make_table(warehouse: str, options: dict) -> lakestore.Table:
    catalog = lakestore.Catalog(warehouse, options=options)
    catalog.create_database("db", exist_ok=True)
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options=TABLE_OPTIONS)


def run_writers(warehouse: str, options: dict, writers: int, commits: int) -> list[list[int]]:
    procs = [spawn("append", warehouse, json.dumps(options), str(w), str(commits)) for w in range(writers)]
    landed = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        landed.append(json.loads(out))
    return landed


def assert_every_commit_once(table: lakestore.Table, landed: list[list[int]], writers: int, commits: int) -> None:
    snaps = table.snapshots()
    total = writers * commits
    assert [s.id for s in snaps] == list(range(1, total + 1))
    assert sorted(i for ids in landed for i in ids) == list(range(1, total + 1))
    for w in range(writers):
        assert [s.commit_identifier for s in snaps if s.commit_user == f"writer-{w}"] == list(range(commits))
    expected = sorted(w * 100_000 + i * 10 + k for w in range(writers) for i in range(commits) for k in range(2))
    assert sorted(table.to_arrow().column("id").to_pylist()) == expected
    assert snaps[-1].total_record_count == len(expected)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["sqlite-lock", "postgres-lock", "conditional-create"])
def test_four_processes_25_commits_each(mechanism, s3_server, bucket, tmp_path, request):
    if mechanism == "sqlite-lock":
        extra = {"lock.enabled": "true", "uri": f"jdbc:sqlite:{tmp_path}/locks.db"}
    elif mechanism == "postgres-lock":
        extra = request.getfixturevalue("postgres").lock_options()
    else:
        extra = {"s3.conditional-create": "true"}
    options = s3_server.options(**extra, **{"lock-check-max-sleep": "100 ms", "lock-acquire-timeout": "2 min"})
    warehouse = f"s3://{bucket}/wh"
    table = make_table(warehouse, options)
    start = time.monotonic()
    landed = run_writers(warehouse, options, WRITERS, COMMITS)
    print(f"{mechanism}: {WRITERS}x{COMMITS} commits in {time.monotonic() - start:.1f} s")
    assert_every_commit_once(table, landed, WRITERS, COMMITS)
