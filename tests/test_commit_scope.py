"""Commits read only the manifests of the partitions they touch, and still detect conflicts there."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.compact import bucket_files, compact_bucket
from lakestore.errors import CommitConflictError
from lakestore.format.binary_row import encode_values
from lakestore.format.types import DataType
from lakestore.meta.file_scan import in_partitions
from lakestore.meta.manifest import ManifestFileMeta, ManifestStore
from lakestore.meta.stats import values_stats

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])


def _rows(ids, dt):
    return pa.table({"dt": [dt] * len(ids), "id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]})


@pytest.fixture
def pk(tmp_path):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    # no manifest merging: every commit's manifest stays in the base list
    options = {"bucket": "1", "write-only": "true", "manifest.merge-min-count": "1000"}
    return cat.create_table("db.pk", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)


def _spy_reads(monkeypatch) -> list[str]:
    read: list[str] = []
    original = ManifestStore.read_entries

    def read_entries(self, name):
        read.append(name)
        return original(self, name)

    monkeypatch.setattr(ManifestStore, "read_entries", read_entries)
    return read


def test_commit_reads_only_manifests_of_its_partition(pk, monkeypatch):
    for day in range(20):
        pk.write_arrow(_rows([1, 2], f"d{day:02d}"))
    w = pk.new_write(commit_user="u")
    w.write_arrow(_rows([3], "d05"))
    messages = w.prepare_commit()
    read = _spy_reads(monkeypatch)
    pk.new_commit(commit_user="u").commit(messages)
    # the manifest of d05's earlier commit, nothing of the 19 other partitions
    assert len(set(read)) == 1
    assert sorted(pk.to_arrow().filter(pa.compute.equal(pk.to_arrow().column("dt"), "d05")).column("id").to_pylist()) == [1, 2, 3]


def test_conflict_in_touched_partition_is_detected(pk):
    for day in range(3):
        pk.write_arrow(_rows([1, 2], f"d{day}"))
        pk.write_arrow(_rows([2, 3], f"d{day}"))
    # two compactions planned from the same snapshot: the second removes files the first removed
    base = pk.latest_snapshot()
    partition = sorted(bucket_files(pk.store, base))[1][0]
    a = compact_bucket(pk.store, partition, 0, full=True, snapshot=base)
    b = compact_bucket(pk.store, partition, 0, full=True, snapshot=base)
    assert a is not None and b is not None
    pk.new_commit(commit_user="a").commit([a])
    with pytest.raises(CommitConflictError):
        pk.new_commit(commit_user="b").commit([b])


def test_partition_filter_keeps_manifests_whose_stats_admit_a_partition():
    types = [DataType("VARCHAR", length=2147483647), DataType("INT")]

    def meta(rows):
        return ManifestFileMeta("m", 1, 1, 0, values_stats(types, rows), 0)

    keep = in_partitions([encode_values(types, ["b", 5])], types, source="test")
    assert keep(meta([("a", 1), ("c", 9)]))
    assert not keep(meta([("c", 1), ("d", 9)]))
    assert not keep(meta([("a", 6), ("c", 9)]))
    assert not keep(meta([("a", None), ("c", 9)]))  # the INT column's values: null and 9
    nulls = in_partitions([encode_values(types, ["b", None])], types, source="test")
    assert nulls(meta([("a", None), ("c", 9)]))
    assert not nulls(meta([("a", 1), ("c", 9)]))


def test_manifest_merge_reads_only_manifests_a_delete_may_touch(tmp_path, monkeypatch):
    cat = lakestore.Catalog(str(tmp_path))
    cat.create_database("db")
    # every manifest counts as large (one entry each) and every commit merges the base list
    options = {"bucket": "1", "write-only": "true", "manifest.target-file-size": "1 b", "manifest.merge-min-count": "2"}
    table = cat.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=options)
    for day in range(20):
        table.write_arrow(_rows([1, 2], f"d{day:02d}"))
    table.write_arrow(_rows([2, 3], "d05"))
    partition = next(p for p, _ in sorted(bucket_files(table.store, table.latest_snapshot())) if b"d05" in p)
    message = compact_bucket(table.store, partition, 0, full=True)
    assert message is not None and message.compact_before
    read = _spy_reads(monkeypatch)
    table.new_commit(commit_user="c").commit([message])
    # d05's manifests (conflict check, merge) and the new DELETE manifest; none of the other 19 days
    assert len(set(read)) <= 4
    monkeypatch.undo()
    rows = table.to_arrow()
    assert rows.num_rows == 2 * 19 + 3
