"""Crash injection: a child process SIGKILLs itself at every step of a commit. The parent
reopens the table: it reads the last landed snapshot exactly, a retry of the checkpointed
commit messages with the same commit user and identifier lands exactly once, and everything
the crashed attempt left behind is unreferenced and removed by orphan cleanup."""

from __future__ import annotations

import json
import os
import signal
import time

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.commit_message import CommitMessage

from .conftest import FAST_RETRY, SCHEMA
from .util import all_files, assert_consistent, make_catalog, run_worker, sorted_rows

# (step, whether the snapshot has landed when the process dies)
STEPS = [
    ("during-data", False),  # killed while a data file is being written: no checkpoint exists
    ("after-data", False),  # data files written and checkpointed, commit never started
    ("after-manifests", False),
    ("after-lists", False),
    ("before-publish", False),
    ("after-publish", True),  # snapshot published, LATEST hint not updated
    ("after-hint", True),
]
USER, IDENT = "job-1", 7


def _table(tmp_path, kind: str) -> lakestore.Table:
    catalog = make_catalog(tmp_path / "wh")
    if kind == "pk":
        return catalog.create_table(
            "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", **FAST_RETRY}
        )
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], options={**FAST_RETRY, "write-only": "true"})


def _crash_rows() -> list[tuple]:
    return [(i, f"p{i % 3}", f"crash-{i}") for i in range(100, 106)]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["append", "pk"])
@pytest.mark.parametrize(("step", "landed"), STEPS, ids=[s for s, _ in STEPS])
def test_kill_at_step_then_reopen_and_retry(tmp_path, kind, step, landed):
    table = _table(tmp_path, kind)
    seed = pa.table({"id": pa.array(range(6), pa.int64()), "dt": [f"p{i % 3}" for i in range(6)], "v": ["seed"] * 6})
    table.write_arrow(seed)
    seed_rows = sorted_rows(seed)
    before = all_files(table.path)
    checkpoint = str(tmp_path / "messages.json")

    proc = run_worker("crash", table.path, step, USER, str(IDENT), "100", checkpoint, check=False)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout, proc.stderr)
    crashed_files = all_files(table.path) - before

    # Reopen: exactly the last landed snapshot.
    reopened = lakestore.Table(table.path)
    expected = sorted(seed_rows + _crash_rows()) if landed else seed_rows
    assert reopened.latest_snapshot().id == (2 if landed else 1)
    assert sorted_rows(reopened.to_arrow()) == expected
    assert_consistent(table.path)
    if step == "after-publish":
        assert open(f"{table.path}/snapshot/LATEST").read().strip() == "1", "the stale hint is what this step tests"

    # Retry from the checkpoint with the same user and identifier: lands exactly once.
    if os.path.exists(checkpoint):
        messages = [CommitMessage.from_bytes(bytes.fromhex(h)) for h in json.load(open(checkpoint))]
        committed = reopened.new_commit(commit_user=USER).commit(messages, IDENT)
        assert [s.id for s in committed] == [2]
        again = reopened.new_commit(commit_user=USER).commit(messages, IDENT)
        assert [s.id for s in again] == [2], "a second retry must find the landed snapshot"
        assert reopened.new_commit(commit_user=USER).filter_committed([IDENT, IDENT + 1]) == [IDENT + 1]
        expected = sorted(seed_rows + _crash_rows())
    else:
        assert step == "during-data"
    final = lakestore.Table(table.path)
    assert [s.id for s in final.snapshots()] == ([1, 2] if os.path.exists(checkpoint) else [1])
    assert sorted_rows(final.to_arrow()) == expected
    refs = assert_consistent(table.path)

    # Leftovers: only files the crashed attempt wrote are unreferenced, and orphan cleanup
    # removes them without touching anything the table needs.
    leftovers = all_files(table.path) - refs
    assert leftovers <= crashed_files, sorted(leftovers - crashed_files)
    if step in ("during-data", "after-manifests", "after-lists", "before-publish"):
        assert leftovers, "the crash must have left something behind for this test to mean anything"
    final.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000)
    assert all_files(table.path) == refs, sorted(all_files(table.path) ^ refs)
    assert sorted_rows(lakestore.Table(table.path).to_arrow()) == expected
