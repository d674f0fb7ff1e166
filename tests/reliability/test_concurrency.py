"""Real processes committing to one table at once (as delta-rs and Paimon's FileStoreCommitTest
test it): no commit is lost or doubled, snapshot ids are dense, and racing deletions of the
same file resolve to exactly one winner and a typed conflict."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import CommitConflictError
from lakestore.meta.commit_message import CommitMessage
from lakestore.write.file_writer import DataFileWriter, FileTarget
from lakestore.write.input import partition_spec

from .conftest import FAST_RETRY, SCHEMA
from .util import all_files, assert_consistent, make_catalog, sorted_rows, spawn_worker, unreferenced

WRITERS = 4
COMMITS = 25


@pytest.mark.slow
def test_four_processes_25_commits_each(tmp_path):
    # write-only: writers do not compact (Paimon's multi-writer mode), so every commit is
    # exactly one APPEND snapshot
    append_table = make_catalog(tmp_path / "wh").create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], options={**FAST_RETRY, "write-only": "true"}
    )
    procs = [spawn_worker("append", append_table.path, str(w), str(COMMITS)) for w in range(WRITERS)]
    landed = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        landed.append(json.loads(out))
    table = lakestore.Table(append_table.path)
    snaps = table.snapshots()
    assert [s.id for s in snaps] == list(range(1, WRITERS * COMMITS + 1))
    assert sorted(i for ids in landed for i in ids) == list(range(1, WRITERS * COMMITS + 1))
    # every writer's identifiers landed once each, in the order it committed them
    for w in range(WRITERS):
        mine = [s.commit_identifier for s in snaps if s.commit_user == f"writer-{w}"]
        assert mine == list(range(COMMITS))
    expected = sorted((w * 100_000 + i * 10 + k,) for w in range(WRITERS) for i in range(COMMITS) for k in range(3))
    assert sorted_rows(table.to_arrow(), ["id"]) == expected
    assert snaps[-1].total_record_count == len(expected)
    assert_consistent(table.path)
    # losers of a publish race delete their manifests: nothing is left unreferenced
    assert unreferenced(table.path) == set()


def _rewrite(table: lakestore.Table, files, tag: str) -> CommitMessage:
    """A compaction of ``files`` (one bucket) into one new file holding the same rows."""
    split = next(s for s in table.scan().plan() if set(files) <= set(s.files))
    rows = table.to_arrow().filter(pa.compute.equal(table.to_arrow().column("dt"), split.partition_values[0]))
    spec = partition_spec(table.schema, split.partition_values)
    writer = DataFileWriter(table.store.file_io, table.schema, FileTarget(table.path, spec.path, split.bucket), prefix=f"data-{tag}")
    after = writer.write_append(rows, first_sequence=min(f.min_sequence_number for f in files))
    return CommitMessage(split.partition, split.bucket, split.total_buckets, compact_before=tuple(files), compact_after=tuple(after))


def test_two_compactions_of_one_file_one_wins(append_table):
    """Both commits delete the same live file: the first lands, the second raises
    CommitConflictError, deletes the files it wrote, and the table reads the winner."""
    table = append_table
    table.write_arrow(pa.table({"id": [1, 2, 3], "dt": ["a"] * 3, "v": ["x", "y", "z"]}))
    table.write_arrow(pa.table({"id": [4], "dt": ["a"], "v": ["w"]}))
    files = table.scan().plan()[0].files
    first = _rewrite(table, files, "one")
    second = _rewrite(table, files, "two")
    [snap] = table.new_commit(commit_user="c1").commit([first], 1)
    assert snap.commit_kind == "COMPACT"
    with pytest.raises(CommitConflictError, match="no longer live"):
        table.new_commit(commit_user="c2").commit([second], 1)
    assert [f.file_name for f in table.scan().plan()[0].files] == [f.file_name for f in first.compact_after]
    assert sorted_rows(table.to_arrow(), ["id"]) == [(1,), (2,), (3,), (4,)]
    assert len(table.snapshots()) == 3
    loser_files = {p for p in all_files(table.path) if "data-two" in p}
    assert loser_files == set(), "the losing compaction must delete the files it wrote"
    assert_consistent(table.path)
    assert unreferenced(table.path) == set()


def test_append_racing_compaction_keeps_appended_rows(append_table):
    """An append landing between a compaction's plan and its commit is kept: the compaction
    only removes the files it read."""
    table = append_table
    for i in range(3):
        table.write_arrow(pa.table({"id": [i], "dt": ["a"], "v": ["x"]}))
    files = table.scan().plan()[0].files
    compaction = _rewrite(table, files, "c")
    table.write_arrow(pa.table({"id": [99], "dt": ["a"], "v": ["late"]}))
    table.new_commit(commit_user="c").commit([compaction], 1)
    assert sorted_rows(table.to_arrow(), ["id"]) == [(0,), (1,), (2,), (99,)]


@pytest.mark.slow
def test_appenders_racing_compactors_match_model(append_table, tmp_path):
    """2 appenders and 2 compactors (processes) on one table. Every operation lands or raises
    CommitConflictError, and the table reads exactly the rows of the landed appends, once each."""
    table = append_table
    table.write_arrow(pa.table({"id": pa.array(list(range(-6, 0)), pa.int64()), "dt": [f"p{i % 3}" for i in range(6)], "v": ["seed"] * 6}))
    logs = [str(tmp_path / f"log-{w}.json") for w in range(4)]
    procs = [spawn_worker("race", table.path, str(w), "12", logs[w]) for w in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
    entries = [e for log in logs for e in json.load(open(log))]
    appends = [e for e in entries if e["kind"] == "append"]
    # a write whose own compaction loses still lands its rows (see TableCommit.commit)
    assert all(e["outcome"] == "landed" for e in appends), [e for e in appends if e["outcome"] != "landed"]
    compactions = [e for e in entries if e["kind"] != "append"]
    assert {e["outcome"] for e in compactions} <= {"landed", "conflict", "skip"}
    assert any(e["outcome"] == "landed" for e in compactions), "the race must exercise compactions"
    expected = sorted([(i,) for i in range(-6, 0)] + [(i,) for e in appends for i in e["ids"]])
    result = lakestore.Table(table.path)
    assert sorted_rows(result.to_arrow(), ["id"]) == expected
    mine = [s for s in result.snapshots() if s.commit_kind == "COMPACT" and s.commit_user in ("racer-1", "racer-3")]
    assert len(mine) >= sum(e["outcome"] == "landed" for e in compactions if e["kind"] == "compact")
    assert result.latest_snapshot().total_record_count == len(expected)
    assert_consistent(result.path)
    assert unreferenced(result.path) == set(), "conflicting compactions must delete their files"


@pytest.mark.slow
def test_writers_racing_compactor_and_expirer(append_table, tmp_path):
    """Appenders and compactors while another process expires snapshots down to 3: every
    operation lands or raises CommitConflictError, the retained snapshots read consistently,
    and the latest one holds exactly the landed appends."""
    table = append_table
    table.write_arrow(pa.table({"id": pa.array(list(range(-6, 0)), pa.int64()), "dt": [f"p{i % 3}" for i in range(6)], "v": ["seed"] * 6}))
    stop = tmp_path / "stop"
    expirer = spawn_worker("expire", table.path, str(stop), str(tmp_path / "expire.json"))
    logs = [str(tmp_path / f"log-{w}.json") for w in range(3)]
    procs = [spawn_worker("race", table.path, str(w), "10", logs[w]) for w in range(3)]
    try:
        for proc in procs:
            _, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, err
    finally:
        stop.touch()
        _, err = expirer.communicate(timeout=120)
    assert expirer.returncode == 0, err
    expire_log = json.load(open(tmp_path / "expire.json"))
    assert expire_log["errors"] == []
    assert expire_log["expired"] > 0, "the expirer must have expired something"
    entries = [e for log in logs for e in json.load(open(log))]
    assert all(e["outcome"] in ("landed", "conflict", "skip") for e in entries), [
        e for e in entries if e["outcome"] not in ("landed", "conflict", "skip")
    ]
    appends = [e for e in entries if e["kind"] == "append"]
    assert all(e["outcome"] == "landed" for e in appends)
    expected = sorted([(i,) for i in range(-6, 0)] + [(i,) for e in appends for i in e["ids"]])
    result = lakestore.Table(table.path)
    assert sorted_rows(result.to_arrow(), ["id"]) == expected
    assert_consistent(result.path)
    for snap in result.snapshots():  # every retained snapshot still reads
        assert result.to_arrow(snapshot_id=snap.id).num_rows == snap.total_record_count
