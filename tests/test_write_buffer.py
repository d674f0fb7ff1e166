"""Write path: bounded write buffer (level-0 runs), file rolling, sequence.field, bucket -1."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
from tests._support import data_files

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string()), ("ts", pa.int64())])


@pytest.fixture
def catalog(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    return cat


def _batch(keys, version, ts=None):
    keys = list(keys)
    return pa.record_batch(
        {
            "k": pa.array(keys, pa.int64()),
            "v": pa.array([f"v{version}-{k}" for k in keys]),
            "ts": pa.array(ts if ts is not None else [version] * len(keys), pa.int64()),
        }
    )


def _live_files(table):
    return [(s.bucket, f) for s in table.scan().plan() for f in s.files]


@pytest.mark.parametrize("write_only", ["true", "false"])
def test_small_buffer_makes_several_level0_runs_and_newest_wins(catalog, write_only):
    t = catalog.create_table(
        "db.t", schema=SCHEMA, primary_keys=["k"], options={"bucket": "2", "write-buffer-size": "2 kb", "write-only": write_only}
    )
    rng = np.random.default_rng(7)
    batches, expected = [], {}
    for version in range(6):
        keys = rng.choice(300, size=150, replace=False)
        batches.append(_batch(keys, version))
        expected.update({int(k): f"v{version}-{k}" for k in keys})
    reader = pa.RecordBatchReader.from_batches(batches[0].schema, batches)
    t.write_arrow(reader)  # one commit
    assert [s.commit_kind for s in t.snapshots()][0] == "APPEND"
    if write_only == "true":
        assert len(t.snapshots()) == 1
        files = _live_files(t)
        per_bucket = {b: [f for bb, f in files if bb == b] for b in (0, 1)}
        for b, fs in per_bucket.items():
            assert len(fs) >= 3, f"bucket {b}: the write buffer did not flush several runs"
            assert {f.level for f in fs} == {0}
            # sequence numbers continue across flushes of one bucket: disjoint ranges
            ranges = sorted((f.min_sequence_number, f.max_sequence_number) for f in fs)
            assert all(a[1] < b_[0] for a, b_ in zip(ranges, ranges[1:], strict=False))
        assert not any(s.raw_convertible for s in t.scan().plan())
    got = {r["k"]: r["v"] for r in t.to_arrow().to_pylist()}
    assert got == expected


def test_buffer_flush_keeps_newest_within_one_batch(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    data = pa.Table.from_batches([_batch([1, 2, 1, 1, 3, 2], 0, ts=[0, 1, 2, 3, 4, 5])])
    data = data.set_column(1, "v", pa.array(["a", "b", "c", "d", "e", "f"]))
    t.write_arrow(data)
    assert {r["k"]: r["v"] for r in t.to_arrow().to_pylist()} == {1: "d", 2: "f", 3: "e"}
    (split,) = t.scan().plan()
    assert len(split.files) == 1 and split.files[0].row_count == 3  # deduplicated in the flush
    path = os.path.join(t.path, "bucket-0", split.files[0].file_name)
    f = pq.read_table(path)
    assert f.column_names == ["_KEY_k", "_SEQUENCE_NUMBER", "_VALUE_KIND", "k", "v", "ts"]
    assert f.column("_KEY_k").to_pylist() == [1, 2, 3]
    assert f.column("_SEQUENCE_NUMBER").to_pylist() == [3, 5, 4]


def test_sequence_numbers_continue_across_commits(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["k"], options={"bucket": "1", "write-only": "true"})
    t.write_arrow(pa.Table.from_batches([_batch(range(5), 0)]))
    t.write_arrow(pa.Table.from_batches([_batch(range(3), 1)]))
    t2 = lakestore.Table.from_path(t.path)  # a different writer
    t2.write_arrow(pa.Table.from_batches([_batch([0], 2)]))
    files = sorted((f.min_sequence_number, f.max_sequence_number) for _, f in _live_files(t))
    assert files == [(0, 4), (5, 7), (8, 8)]
    assert {r["k"]: r["v"] for r in t.to_arrow().to_pylist()} == {0: "v2-0", 1: "v1-1", 2: "v1-2", 3: "v0-3", 4: "v0-4"}


@pytest.mark.parametrize("pk", [True, False])
def test_target_file_size_rolls_files(catalog, pk):
    # write-only: no compaction by the writer, so the files on disk are exactly the rolled ones
    kwargs = (
        {"primary_keys": ["k"], "options": {"bucket": "1", "target-file-size": "16 kb", "write-only": "true"}}
        if pk
        else {"options": {"target-file-size": "16 kb", "write-only": "true"}}
    )
    t = catalog.create_table("db.t", schema=SCHEMA, **kwargs)
    n = 20_000
    t.write_arrow(pa.Table.from_batches([_batch(range(n), 0)]))
    files = [f for _, f in _live_files(t)]
    assert len(files) >= 3, "target-file-size did not roll files"
    assert sum(f.row_count for f in files) == n
    assert len(data_files(t.path)) == len(files)
    for f in files:
        assert f.file_size < 16 * 1024 * 4  # rolled near the target (estimate, compressed)
    if pk:
        # one sorted run split into files: key ranges do not overlap
        ranges = sorted((f.min_sequence_number, f.row_count, f.min_key, f.max_key) for f in files)
        assert len({f.level for f in files}) == 1
        t_rows = t.to_arrow()
        assert t_rows.num_rows == n and sorted(t_rows.column("k").to_pylist()) == list(range(n))
        assert ranges
    else:
        assert t.to_arrow().column("k").to_pylist() == list(range(n))  # insertion order kept


def test_sequence_field_orders_versions(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["k"], options={"bucket": "2", "sequence.field": "ts"})
    t.write_arrow(pa.Table.from_batches([_batch([1, 2, 3], 0, ts=[10, 10, 10])]))
    # later commit, but older event time for keys 1 and 2: must not win
    t.write_arrow(pa.Table.from_batches([_batch([1, 2, 3], 1, ts=[5, 10, 11])]))
    got = {r["k"]: (r["v"], r["ts"]) for r in t.to_arrow().to_pylist()}
    assert got == {1: ("v0-1", 10), 2: ("v1-2", 10), 3: ("v1-3", 11)}  # ts tie: newer write wins
    # inside one batch too
    t.write_arrow(pa.Table.from_batches([_batch([4, 4, 4], 2, ts=[3, 9, 1])]).set_column(1, "v", pa.array(["a", "b", "c"])))
    assert {r["k"]: r["v"] for r in t.to_arrow().to_pylist()}[4] == "b"


def test_bucket_unaware_append_table(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, options={"bucket": "-1"})
    t.write_arrow(pa.Table.from_batches([_batch([5, 3, 9, 1], 0)]))
    t.write_arrow(pa.Table.from_batches([_batch([5, 5], 1)]))
    assert {os.path.dirname(p) for p in data_files(t.path)} == {"bucket-0"}
    splits = t.scan().plan()
    assert all(s.bucket == 0 and s.total_buckets == -1 for s in splits)
    out = t.to_arrow()
    assert sorted(out.column("k").to_pylist()) == [1, 3, 5, 5, 5, 9]  # no dedup without primary key
    first = t.to_arrow(snapshot_id=1)
    assert first.column("k").to_pylist() == [5, 3, 9, 1]  # insertion order kept
    entries = [
        e
        for m in t.store.manifests().read_list(t.latest_snapshot().delta_manifest_list)
        for e in t.store.manifests().read_entries(m.file_name)
    ]
    assert {e.total_buckets for e in entries} == {-1}


def test_fixed_bucket_append_table_routes_by_bucket_key(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, options={"bucket": "4", "bucket-key": "k"})
    t.write_arrow(pa.Table.from_batches([_batch(range(100), 0)]))
    t.write_arrow(pa.Table.from_batches([_batch(range(100), 1)]))
    from lakestore.format.bucket import compute_buckets

    expected = compute_buckets(t.schema.types_of(["k"]), [pa.array(range(100), pa.int64())], 4)
    for s in t.scan().plan():
        keys = t.store.split_reader().read(s, ["k"], None).column("k").to_pylist()
        assert all(expected[k] == s.bucket for k in keys)
        assert s.total_buckets == 4
    assert t.to_arrow().num_rows == 200


@pytest.mark.parametrize("rows", [1_000, 100_000])  # below and above the parallel routing threshold
def test_routed_rows_keep_arrival_sequence_numbers(catalog, rows):
    """Routing sorts each bucket's rows by key; the sequence numbers still follow arrival order
    (as Paimon's writers number them), so a key's last row wins and a bucket's numbers are
    exactly the ranks of its rows in the input."""
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["k"], options={"bucket": "3", "write-only": "true"})
    rng = np.random.default_rng(7)
    keys = rng.integers(0, rows // 2, rows)
    data = pa.table({"k": keys, "v": [f"r{i}" for i in range(rows)], "ts": np.arange(rows)})
    t.write_arrow(data)
    expected = {int(k): f"r{i}" for i, k in enumerate(keys)}  # the last arrival of every key
    assert {r["k"]: r["v"] for r in t.to_arrow().to_pylist()} == expected
    for split in t.scan().plan():
        (f,) = split.files
        written = pq.read_table(os.path.join(t.path, f"bucket-{split.bucket}", f.file_name))
        assert written.column("_KEY_k").to_pylist() == sorted(written.column("_KEY_k").to_pylist())
        # the input rows of this bucket, numbered 0.. in arrival order; a key keeps its last one's number
        ts_in_bucket = np.sort(np.asarray(written.column("ts")))
        arrival = {int(ts): rank for rank, ts in enumerate(np.flatnonzero(np.isin(keys, np.asarray(written.column("k")))))}
        assert np.array_equal(np.asarray(written.column("_SEQUENCE_NUMBER")), [arrival[int(x)] for x in written.column("ts").to_pylist()])
        assert (f.min_sequence_number, f.max_sequence_number) == (min(arrival[int(x)] for x in ts_in_bucket), max(arrival.values()))


@pytest.mark.parametrize("spillable", ["true", "false"])
def test_full_buffer_of_many_small_buckets_spills_and_commits_one_run_per_bucket(catalog, spillable):
    """A buffer that fills with the rows of many small buckets spills them to local disk
    (``write-buffer-spillable``, Paimon's default): each bucket writes ONE level-0 run per commit
    from its spilled pieces and its buffer, newest version of a key winning across both."""
    schema = pa.schema([("p", pa.int64()), ("k", pa.int64()), ("v", pa.string())])
    t = catalog.create_table(
        "db.t",
        schema=schema,
        partition_keys=["p"],
        primary_keys=["p", "k"],
        options={"bucket": "2", "write-buffer-size": "16 kb", "write-only": "true", "write-buffer-spillable": spillable},
    )
    rng = np.random.default_rng(11)
    batches, expected = [], {}
    for version in range(8):
        p = rng.integers(0, 60, size=400)
        k = rng.integers(0, 50, size=400)
        v = [f"v{version}-{i}" for i in range(400)]
        batches.append(pa.record_batch({"p": pa.array(p), "k": pa.array(k), "v": pa.array(v)}))
        expected.update({(int(a), int(b)): c for a, b, c in zip(p, k, v, strict=True)})
    t.write_arrow(pa.RecordBatchReader.from_batches(schema, batches))
    got = {(r["p"], r["k"]): r["v"] for r in t.to_arrow().to_pylist()}
    assert got == expected
    files = [(s.partition, s.bucket, f) for s in t.scan().plan() for f in s.files]
    per_bucket: dict = {}
    for part, bucket, f in files:
        per_bucket.setdefault((part, bucket), []).append(f)
    if spillable == "true":
        assert all(len(fs) == 1 for fs in per_bucket.values()), "a spilled bucket wrote more than one run"
    else:
        assert any(len(fs) > 1 for fs in per_bucket.values()), "the buffer never flushed a bucket early"
    for fs in per_bucket.values():
        ranges = sorted((f.min_sequence_number, f.max_sequence_number) for f in fs)
        assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:], strict=False))
