"""Commit: idempotent retries, filter_committed, conflicts, overwrite, empty commits, hints."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import CommitConflictError, CorruptMetadataError
from lakestore.meta.commit_message import CommitMessage
from tests._support import all_files, data_files

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])


def _rows(ids, dt="d1", v="x"):
    return pa.table({"dt": [dt] * len(ids), "id": pa.array(ids, pa.int64()), "v": [f"{v}{i}" for i in ids]})


@pytest.fixture
def catalog(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    return cat


@pytest.fixture
def pk(catalog):
    return catalog.create_table("db.pk", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"})


@pytest.fixture
def append(catalog):
    return catalog.create_table("db.ap", schema=SCHEMA, partition_keys=["dt"])


def _ids(table):
    return sorted(table.to_arrow().column("id").to_pylist())


def test_retry_with_same_user_and_identifier_lands_once(pk):
    w = pk.new_write(commit_user="job-1")
    w.write_arrow(_rows([1, 2, 3]))
    messages = w.prepare_commit()
    first = pk.new_commit(commit_user="job-1").commit(messages, commit_identifier=7)
    assert [s.id for s in first] == [1]
    assert first[0].commit_identifier == 7 and first[0].commit_user == "job-1"
    # the driver restarts and retries the same commit (bytes sent again by the executors)
    again = pk.new_commit(commit_user="job-1").commit([CommitMessage.from_bytes(m.to_bytes()) for m in messages], commit_identifier=7)
    assert [s.id for s in again] == [1]
    assert pk.store.snapshot_manager.list_ids() == [1]
    assert _ids(pk) == [1, 2, 3]
    # a different identifier is a different commit
    w = pk.new_write(commit_user="job-1")
    w.write_arrow(_rows([4]))
    assert [s.id for s in pk.new_commit(commit_user="job-1").commit(w.prepare_commit(), commit_identifier=8)] == [2]


def test_retry_after_other_commits_landed(append):
    w = append.new_write(commit_user="u")
    w.write_arrow(_rows([1]))
    msgs = w.prepare_commit()
    append.new_commit(commit_user="u").commit(msgs, commit_identifier=1)
    append.write_arrow(_rows([2]))  # someone else
    append.write_arrow(_rows([3]))
    assert [s.id for s in append.new_commit(commit_user="u").commit(msgs, commit_identifier=1)] == [1]
    assert _ids(append) == [1, 2, 3]


def test_filter_committed(append):
    c = append.new_commit(commit_user="stream")
    assert c.filter_committed([5, 6, 7]) == [5, 6, 7]
    for ident in (5, 6):
        w = append.new_write(commit_user="stream")
        w.write_arrow(_rows([ident]))
        c.commit(w.prepare_commit(), commit_identifier=ident)
    append.write_arrow(_rows([99]), commit_user="other")
    assert append.new_commit(commit_user="stream").filter_committed([5, 6, 7, 8]) == [7, 8]
    assert append.new_commit(commit_user="nobody").filter_committed([5, 6]) == [5, 6]


def test_conflict_deleting_file_no_longer_live(pk):
    pk.write_arrow(_rows([1, 2]))
    live = [f for s in pk.scan().plan() for f in s.files]
    split = pk.scan().plan()[0]
    # a "compaction" prepared against snapshot 1 ...
    w = pk.new_write(commit_user="compactor")
    w.write_arrow(_rows([1, 2]))
    written = w.prepare_commit()
    new_file_paths = data_files(pk.path) - {p for p in data_files(pk.path) if any(p.endswith(f.file_name) for f in live)}
    assert new_file_paths
    compact = [
        CommitMessage(
            split.partition,
            split.bucket,
            split.total_buckets,
            compact_before=split.files,
            compact_after=tuple(f for m in written for f in m.new_files if m.bucket == split.bucket and m.partition == split.partition),
        )
    ]
    compact += [
        CommitMessage(m.partition, m.bucket, m.total_buckets, compact_after=m.new_files)
        for m in written
        if (m.partition, m.bucket) != (split.partition, split.bucket)
    ]
    # ... while an overwrite removed the files it wants to replace
    pk.write_arrow(_rows([5]), overwrite=True)
    before = pk.latest_snapshot().id
    with pytest.raises(CommitConflictError):
        pk.new_commit(commit_user="compactor").commit(compact)
    assert pk.latest_snapshot().id == before
    assert _ids(pk) == [5]
    left = {os.path.basename(p) for p in data_files(pk.path)}
    assert not left & {os.path.basename(p) for p in new_file_paths}, "data files of the failed commit were not removed"


def test_conflict_bucket_count_changed_removes_files(append, catalog):
    t = catalog.create_table("db.b", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(_rows([1, 2, 3, 4]))
    files_before = data_files(t.path)
    w = t.new_write(commit_user="u")
    w.write_arrow(_rows([10, 11]))
    msgs = [dataclasses.replace(m, total_buckets=3) for m in w.prepare_commit()]
    with pytest.raises(CommitConflictError):
        t.new_commit(commit_user="u").commit(msgs)
    assert t.store.snapshot_manager.list_ids() == [1]
    assert data_files(t.path) == files_before


def test_overwrite_one_partition(pk):
    pk.write_arrow(pa.concat_tables([_rows([1, 2, 3], "d1"), _rows([1, 2], "d2")]))
    snap = pk.write_arrow(_rows([9], "d1", "new"), overwrite={"dt": "d1"})
    assert snap.commit_kind == "OVERWRITE"
    got = sorted((r["dt"], r["id"], r["v"]) for r in pk.to_arrow().to_pylist())
    assert got == [("d1", 9, "new9"), ("d2", 1, "x1"), ("d2", 2, "x2")]
    assert snap.total_record_count == 3
    # time travel still sees the old partition
    assert len(pk.to_arrow(snapshot_id=1)) == 5


def test_overwrite_partition_with_no_rows_truncates_it(append):
    append.write_arrow(pa.concat_tables([_rows([1, 2], "d1"), _rows([3], "d2")]))
    snap = append.write_arrow(_rows([], "d1"), overwrite={"dt": "d1"})
    assert snap is not None and snap.commit_kind == "OVERWRITE"
    assert _ids(append) == [3]


def test_overwrite_whole_table(pk, append):
    for t in (pk, append):
        t.write_arrow(pa.concat_tables([_rows([1, 2], "d1"), _rows([3], "d2")]))
        t.write_arrow(_rows([7], "d3"), overwrite=True)
        assert [(r["dt"], r["id"]) for r in t.to_arrow().to_pylist()] == [("d3", 7)]
        assert t.latest_snapshot().commit_kind == "OVERWRITE"
        assert t.latest_snapshot().total_record_count == 1


def test_overwrite_pk_does_not_inherit_old_sequence_rows(pk):
    """After overwriting a partition, the old rows must not come back through merge-on-read."""
    pk.write_arrow(_rows([1, 2, 3], "d1", "old"))
    pk.write_arrow(_rows([1], "d1", "new"), overwrite={"dt": "d1"})
    pk.write_arrow(_rows([4], "d1", "later"))
    got = sorted((r["id"], r["v"]) for r in pk.to_arrow().to_pylist())
    assert got == [(1, "new1"), (4, "later4")]


def test_empty_write_commits_nothing(pk, append):
    for t in (pk, append):
        assert t.write_arrow(_rows([])) is None
        assert t.latest_snapshot() is None
        assert t.new_commit(commit_user="u").commit([]) == []
        assert t.latest_snapshot() is None
        t.write_arrow(_rows([1]))
        files = all_files(t.path)
        assert t.write_arrow(_rows([])) is None
        assert t.latest_snapshot().id == 1
        assert all_files(t.path) == files


@pytest.mark.parametrize("hint", ["missing", "stale", "garbage", "ahead", "empty"])
def test_latest_hint_is_only_a_hint(append, hint):
    for i in range(3):
        append.write_arrow(_rows([i]))
    path = os.path.join(append.path, "snapshot", "LATEST")
    if hint == "missing":
        os.remove(path)
    else:
        with open(path, "w") as f:
            f.write({"stale": "1", "garbage": "\x00not-a-number", "ahead": "99", "empty": ""}[hint])
    fresh = lakestore.Table.from_path(append.path)
    assert fresh.latest_snapshot().id == 3
    assert _ids(fresh) == [0, 1, 2]
    assert fresh.write_arrow(_rows([3])).id == 4
    assert _ids(fresh) == [0, 1, 2, 3]


def test_no_earliest_or_latest_hint_at_all(append):
    append.write_arrow(_rows([1]))
    append.write_arrow(_rows([2]))
    for name in ("LATEST", "EARLIEST"):
        p = os.path.join(append.path, "snapshot", name)
        if os.path.exists(p):
            os.remove(p)
    assert [s.id for s in append.snapshots()] == [1, 2]
    assert append.write_arrow(_rows([3])).id == 3


def test_commit_message_bytes_round_trip(pk):
    w = pk.new_write(commit_user="u")
    w.write_arrow(pa.concat_tables([_rows(list(range(20)), "d1"), _rows([1], "d2")]))
    messages = w.prepare_commit()
    assert len(messages) >= 2
    for m in messages:
        raw = m.to_bytes()
        assert isinstance(raw, bytes)
        back = CommitMessage.from_bytes(raw)
        assert back == m
        assert back.to_bytes() == raw
    full = CommitMessage(
        b"\x00" * 12,
        1,
        4,
        new_files=messages[0].new_files,
        compact_before=messages[0].new_files,
        compact_after=messages[0].new_files,
        changelog_files=messages[0].new_files,
    )
    assert CommitMessage.from_bytes(full.to_bytes()) == full
    pk.new_commit(commit_user="u").commit([CommitMessage.from_bytes(m.to_bytes()) for m in messages])
    assert len(pk.to_arrow()) == 21


@pytest.mark.parametrize("raw", [b"", b"\x07abc", b"\x01" + b"\xff" * 40])
def test_commit_message_garbage(raw):
    with pytest.raises(CorruptMetadataError):
        CommitMessage.from_bytes(raw)


def test_abort_deletes_written_files(pk):
    pk.write_arrow(_rows([1]))
    before = data_files(pk.path)
    w = pk.new_write(commit_user="u")
    w.write_arrow(_rows([2, 3, 4]))
    msgs = w.prepare_commit()
    assert data_files(pk.path) > before
    pk.new_commit(commit_user="u").abort(msgs)
    assert data_files(pk.path) == before
    assert _ids(pk) == [1]


def test_two_writers_from_same_base_both_land(append):
    append.write_arrow(_rows([0]))
    w1, w2 = append.new_write(commit_user="a"), append.new_write(commit_user="b")
    w1.write_arrow(_rows([1]))
    w2.write_arrow(_rows([2]))
    m1, m2 = w1.prepare_commit(), w2.prepare_commit()
    assert append.new_commit(commit_user="a").commit(m1)[0].id == 2
    assert append.new_commit(commit_user="b").commit(m2)[0].id == 3
    assert _ids(append) == [0, 1, 2]
    assert append.latest_snapshot().total_record_count == 3


def _committer(path, worker, n):
    t = lakestore.Table.from_path(path)
    for i in range(n):
        t.write_arrow(_rows([worker * 100 + i]))


def test_concurrent_processes_each_commit_lands_once(append):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_committer, args=(append.path, w, 4)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    snaps = append.snapshots()
    assert [s.id for s in snaps] == list(range(1, len(snaps) + 1))
    # one APPEND per write (writers may add COMPACT snapshots of their own)
    assert sum(s.commit_kind == "APPEND" for s in snaps) == 12
    assert {s.commit_kind for s in snaps} <= {"APPEND", "COMPACT"}
    assert _ids(append) == sorted(w * 100 + i for w in range(3) for i in range(4))
    assert append.latest_snapshot().total_record_count == 12
    # no leftover temp files from publishing
    assert not [f for f in os.listdir(os.path.join(append.path, "snapshot")) if f.endswith(".tmp")]
