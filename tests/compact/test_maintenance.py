"""Writers that compact (stop-trigger back-pressure, prepare_commit), dedicated compaction with
write-only writers, and append-table small-file compaction."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lakestore.format.binary_row import decode_row

from ._tables import PK_SCHEMA, catalog, kv, live_files, parquet_files, sorted_runs_per_bucket


def test_sorted_runs_stay_under_stop_trigger_in_a_long_stream(tmp_path):
    t = catalog(tmp_path / "wh").create_table(
        "db.s",
        schema=PK_SCHEMA,
        primary_keys=["id"],
        options={
            "bucket": "2",
            "num-sorted-run.compaction-trigger": "3",
            "num-sorted-run.stop-trigger": "5",
        },
    )
    expected = {}
    for i in range(60):
        ids = [(i * 7 + j) % 40 for j in range(3)]
        t.write_arrow(kv(ids, f"c{i}-"))
        expected.update({k: f"c{i}-{k}" for k in ids})
        runs = sorted_runs_per_bucket(t)
        assert max(runs.values()) <= 5, (i, runs)
    kinds = [s.commit_kind for s in t.snapshots()]
    assert "COMPACT" in kinds  # the writers compacted on their own
    assert {r["id"]: r["v"] for r in t.to_arrow().to_pylist()} == expected


def test_stop_trigger_back_pressure_inside_one_commit(tmp_path):
    # Many flushes in one commit (tiny write buffer): the writer compacts before the commit.
    t = catalog(tmp_path / "wh").create_table(
        "db.b",
        schema=PK_SCHEMA,
        primary_keys=["id"],
        options={
            "bucket": "1",
            "write-buffer-size": "1 b",
            "num-sorted-run.compaction-trigger": "2",
            "num-sorted-run.stop-trigger": "3",
        },
    )
    write = t.new_write(commit_user="u")
    for i in range(12):
        write.write_arrow(kv([i, i + 1], f"w{i}-"))
    t.new_commit(commit_user="u").commit(write.prepare_commit(), 1)
    assert max(sorted_runs_per_bucket(t).values()) <= 3
    got = {r["id"]: r["v"] for r in t.to_arrow().to_pylist()}
    assert got == {**{i: f"w{i}-{i}" for i in range(12)}, 12: "w11-12"}
    # No orphans: every file on disk is live in some snapshot (new files a same-commit compaction
    # replaced stay, as in Paimon: the APPEND snapshot adds them, the COMPACT one deletes them);
    # intermediate compaction outputs that no snapshot references were deleted.
    referenced = set().union(*({f.file_name for f in live_files(t, s)} for s in t.snapshots()))
    assert parquet_files(t) == referenced


def test_write_only_never_compacts_until_table_compact(tmp_path):
    t = catalog(tmp_path / "wh").create_table(
        "db.w",
        schema=PK_SCHEMA,
        primary_keys=["id"],
        options={
            "bucket": "1",
            "write-only": "true",
            "num-sorted-run.compaction-trigger": "2",
            "num-sorted-run.stop-trigger": "3",
        },
    )
    for i in range(10):
        t.write_arrow(kv([i, 100], f"r{i}-"))
    assert {s.commit_kind for s in t.snapshots()} == {"APPEND"}
    assert sorted_runs_per_bucket(t) and max(sorted_runs_per_bucket(t).values()) == 10
    before = t.to_arrow()
    snaps = t.compact()
    assert [s.commit_kind for s in snaps] == ["COMPACT"]
    assert max(sorted_runs_per_bucket(t).values()) < 10
    t.compact(full=True)
    assert [f.level for f in live_files(t)] == [t.options.num_levels - 1]
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == sorted(before.to_pylist(), key=lambda r: r["id"])


def test_compact_chosen_partitions_only(tmp_path):
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
    t = catalog(tmp_path / "wh").create_table(
        "db.p", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", "write-only": "true"}
    )
    for i in range(3):
        t.write_arrow(pa.table({"dt": ["a", "a", "b", "b"], "id": [1, 2, 1, 2], "v": [i] * 4}, schema=schema))
    t.compact(full=True, partitions=[{"dt": "a"}])
    types = t.schema.types_of(["dt"])
    for e in __import__("lakestore.meta.file_scan", fromlist=["live_entries"]).live_entries(t.store.manifests(), t.latest_snapshot()):
        dt = decode_row(e.partition, types)[0]
        assert (e.file.level == t.options.num_levels - 1) == (dt == "a"), (dt, e.file.level)
    assert sorted((r["dt"], r["id"], r["v"]) for r in t.to_arrow().to_pylist()) == [("a", 1, 2), ("a", 2, 2), ("b", 1, 2), ("b", 2, 2)]


# -- append tables ----------------------------------------------------------------------------
APPEND_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _append_rows(i: int) -> pa.Table:
    return pa.table({"id": [i * 10 + j for j in range(10)], "v": [f"r{i}"] * 10}, schema=APPEND_SCHEMA)


@pytest.mark.parametrize("bucket_options", [{"bucket": "-1"}, {"bucket": "2", "bucket-key": "id"}], ids=["unaware", "fixed"])
def test_append_small_file_compaction(tmp_path, bucket_options):
    t = catalog(tmp_path / "wh").create_table(
        "db.a",
        schema=APPEND_SCHEMA,
        options={
            **bucket_options,
            "write-only": "true",
            "compaction.min.file-num": "4",
            "compaction.max.file-num": "6",
        },
    )
    for i in range(3):
        t.write_arrow(_append_rows(i))
    expected = sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    per_bucket = _files_per_bucket(t)
    assert t.compact() == [], "below compaction.min.file-num: nothing to do"
    for i in range(3, 12):
        t.write_arrow(_append_rows(i))
    expected = sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    per_bucket = _files_per_bucket(t)
    [snap] = t.compact()
    assert snap.commit_kind == "COMPACT"
    after = _files_per_bucket(t)
    for bucket, n in per_bucket.items():
        if n >= 4:
            # at most max.file-num files merged into one
            assert after[bucket] == n - min(n, 6) + 1, (bucket, n, after[bucket])
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == expected
    t.compact(full=True)
    assert all(n == 1 for n in _files_per_bucket(t).values())
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == expected


def test_append_writer_compacts_without_write_only(tmp_path):
    t = catalog(tmp_path / "wh").create_table(
        "db.aw", schema=APPEND_SCHEMA, options={"bucket": "-1", "compaction.min.file-num": "3", "compaction.max.file-num": "5"}
    )
    for i in range(10):
        t.write_arrow(_append_rows(i))
    assert "COMPACT" in [s.commit_kind for s in t.snapshots()]
    assert _files_per_bucket(t)[0] < 10
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == list(range(100))


def _files_per_bucket(t) -> dict[int, int]:
    out: dict[int, int] = {}
    for f_bucket in __import__("lakestore.meta.file_scan", fromlist=["live_entries"]).live_entries(
        t.store.manifests(), t.latest_snapshot()
    ):
        out[f_bucket.bucket] = out.get(f_bucket.bucket, 0) + 1
    return out
