"""Dedicated compaction racing writers on the same bucket: the commit's conflict detection may
refuse one side (CommitConflictError), but data is never lost or duplicated."""

from __future__ import annotations

import contextlib
import threading

import pytest

from lakestore.compact import compact_bucket
from lakestore.errors import CommitConflictError

from ._tables import PK_SCHEMA, catalog, kv, live_files

FAST_RETRY = {"commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "20 ms", "commit.max-retries": "50"}


def _table(tmp_path, **options):
    return catalog(tmp_path / "wh").create_table(
        "db.c", schema=PK_SCHEMA, primary_keys=["id"], options={"bucket": "1", **FAST_RETRY, **options}
    )


def _content(t):
    return {r["id"]: r["v"] for r in t.to_arrow().to_pylist()}


def test_compaction_planned_before_a_write_still_commits(tmp_path):
    t = _table(tmp_path, **{"write-only": "true"})
    for i in range(4):
        t.write_arrow(kv(range(i, i + 5), f"a{i}-"))
    base = t.latest_snapshot()
    [(partition, bucket)] = {
        (e.partition, e.bucket) for e in __import__("lakestore.meta.file_scan", fromlist=["x"]).live_entries(t.store.manifests(), base)
    }
    message = compact_bucket(t.store, partition, bucket, full=True, snapshot=base)
    t.write_arrow(kv([0, 100], "late-"))  # lands between planning and committing
    expected = _content(t)
    [snap] = t.new_commit(commit_user="compactor").commit([message])
    assert snap.commit_kind == "COMPACT"
    assert _content(t) == expected
    assert sorted(f.level for f in live_files(t)) == [0, 5]


def test_two_compactions_of_the_same_files_conflict(tmp_path):
    t = _table(tmp_path, **{"write-only": "true"})
    for i in range(4):
        t.write_arrow(kv(range(i, i + 5), f"a{i}-"))
    base = t.latest_snapshot()
    [(partition, bucket)] = {
        (e.partition, e.bucket) for e in __import__("lakestore.meta.file_scan", fromlist=["x"]).live_entries(t.store.manifests(), base)
    }
    first = compact_bucket(t.store, partition, bucket, full=True, snapshot=base)
    second = compact_bucket(t.store, partition, bucket, full=True, snapshot=base)
    expected = _content(t)
    t.new_commit(commit_user="c1").commit([first])
    with pytest.raises(CommitConflictError):
        t.new_commit(commit_user="c2").commit([second])
    assert _content(t) == expected
    assert len(live_files(t)) == 1


@pytest.mark.slow
def test_writer_and_dedicated_compactor_race(tmp_path):
    # A compacting writer (not write-only) and a dedicated full compaction loop on one bucket.
    t = _table(tmp_path, **{"num-sorted-run.compaction-trigger": "2"})
    errors: list[BaseException] = []
    landed_users: list[str] = []
    stop = threading.Event()

    def writer():
        try:
            for i in range(25):
                user = f"w{i}"
                with contextlib.suppress(CommitConflictError):
                    t.write_arrow(kv([i % 7, 50 + i], f"w{i}-"), commit_user=user)
                landed_users.append(user)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            stop.set()

    def compactor():
        try:
            while not stop.is_set():
                with contextlib.suppress(CommitConflictError):
                    t.compact(full=True)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=compactor)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=600)
    assert not errors, errors
    # Which writes landed: their APPEND snapshots (a write whose own compaction lost the race
    # raises after its APPEND landed).
    appended = {s.commit_user for s in t.snapshots() if s.commit_kind == "APPEND"}
    expected: dict[int, str] = {}
    for i in range(25):
        if f"w{i}" in appended:
            expected[i % 7] = f"w{i}-{i % 7}"
            expected[50 + i] = f"w{i}-{50 + i}"
    assert _content(t) == expected
    t.compact(full=True)
    assert _content(t) == expected
