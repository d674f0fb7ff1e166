"""Dynamic bucket mode: the vectorised assigner against a key-by-key model of Paimon's
``PartitionIndex.assign``, and tables against an in-memory model of their rows."""

from __future__ import annotations

import os
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lakestore
from lakestore.errors import OptionError
from lakestore.io.fileio import LocalFileIO
from lakestore.meta.index_manifest import read_index_manifest
from lakestore.write.dynamic_bucket import HashBucketAssigner, assigner_ids, partition_hash


class ModelAssigner:
    """Paimon 0.9's PartitionIndex for one partition, one key at a time."""

    def __init__(self, target: int, num_assigners: int = 1, assign_id: int = 0) -> None:
        self.target = target
        self.mine = lambda b: b % num_assigners == assign_id % num_assigners
        self.hash_to_bucket: dict[int, int] = {}
        self.non_full: dict[int, int] = {}  # insertion-ordered, like the loaded HashMap for small buckets
        self.total: set[int] = set()

    def assign(self, h: int) -> int:
        if h in self.hash_to_bucket:
            return self.hash_to_bucket[h]
        for bucket, count in list(self.non_full.items()):
            if count < self.target:
                self.non_full[bucket] = count + 1
                self.hash_to_bucket[h] = bucket
                return bucket
            del self.non_full[bucket]
        bucket = next(b for b in range(32767) if self.mine(b) and b not in self.total)
        self.hash_to_bucket[h] = bucket
        self.non_full[bucket] = 1
        self.total.add(bucket)
        return bucket


PARTITION = b"\x00\x00\x00\x00" + bytes(8)


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(st.lists(st.integers(-50, 50), min_size=0, max_size=40), min_size=1, max_size=5),
    target=st.integers(1, 7),
    assigners=st.sampled_from([(1, 0), (3, 1), (2, 0)]),
)
def test_assigner_matches_the_key_by_key_model(tmp_path_factory, batches, target, assigners):
    num_assigners, assign_id = assigners
    root = str(tmp_path_factory.mktemp("assign"))
    ours = HashBucketAssigner(LocalFileIO(), root, [], target_row_num=target, num_assigners=num_assigners, assign_id=assign_id)
    model = ModelAssigner(target, num_assigners, assign_id)
    for batch in batches:
        hashes = np.array(batch, dtype=np.int32)
        got = ours.assign(PARTITION, hashes).tolist()
        assert got == [model.assign(int(h)) for h in hashes]
    assert all(ours._mine(b) for b in model.total)


def test_assigner_ids_follow_java_int_arithmetic():
    # computeAssigner: (abs(partitionHash % channels) + abs(keyHash % assigners)) % channels, Java's % truncates
    ids = assigner_ids(-7, np.array([-5, 5, -2147483648, 2147483647], dtype=np.int32), num_channels=3, num_assigners=3)
    assert ids.tolist() == [(1 + 2) % 3, (1 + 2) % 3, (1 + 2) % 3, (1 + 1) % 3]
    assert isinstance(partition_hash(PARTITION), int)


SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
_ROW = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 30), st.integers(0, 1000), st.sampled_from(["+I", "+I", "-D"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    commits=st.lists(st.lists(_ROW, min_size=1, max_size=25), min_size=1, max_size=5),
    target=st.sampled_from(["2", "5", "1000"]),
    buffer=st.sampled_from(["64 b", "256 mb"]),
)
def test_dynamic_bucket_tables_match_the_model(tmp_path_factory, commits, target, buffer):
    catalog = lakestore.Catalog(str(tmp_path_factory.mktemp("wh")))
    catalog.create_database("db")
    schema = SCHEMA.append(pa.field("op", pa.string()))
    options = {"dynamic-bucket.target-row-num": target, "write-buffer-size": buffer, "rowkind.field": "op"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)
    model: dict[tuple[str, int], int] = {}
    for rows in commits:
        columns = zip(*rows, strict=True)
        table.write_arrow(pa.table({name: list(col) for name, col in zip(schema.names, columns, strict=True)}, schema=schema))
        for dt, key, value, op in rows:
            if op == "-D":
                model.pop((dt, key), None)
            else:
                model[(dt, key)] = value
        got = table.to_arrow(columns=["dt", "id", "v"])
        assert sorted(zip(got["dt"].to_pylist(), got["id"].to_pylist(), got["v"].to_pylist(), strict=True)) == sorted(
            (dt, key, value) for (dt, key), value in model.items()
        )
    # every key lives in one bucket, and no bucket indexes more keys than the target
    buckets: dict[tuple[str, int], set[int]] = defaultdict(set)
    for split in table.scan().plan():
        for f in split.files:
            keys = table.store.split_reader().read_file(split.partition_values, split.bucket, f, ["dt", "id"], system=False)
            for dt, key in zip(keys["dt"].to_pylist(), keys["id"].to_pylist(), strict=True):
                buckets[(dt, key)].add(split.bucket)
    assert all(len(b) == 1 for b in buckets.values())
    snapshot = table.latest_snapshot()
    assert snapshot is not None and snapshot.index_manifest
    for entry in read_index_manifest(table.store.file_io, table.path, snapshot.index_manifest):
        assert entry.index_file.row_count <= int(target)


def _table(tmp_path, **options: str) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    return catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)


def _rows(dt: str, ids: list[int]) -> pa.Table:
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": ids}, schema=SCHEMA)


def test_a_failed_write_leaves_no_index_file(tmp_path):
    table = _table(tmp_path, **{"dynamic-bucket.target-row-num": "2"})
    table.write_arrow(_rows("a", [1, 2, 3]))
    index_files = sorted(os.listdir(os.path.join(table.path, "index")))
    bad = pa.table({"dt": ["a", "a"], "id": [4, None], "v": [1, 2]}, schema=SCHEMA.set(1, pa.field("id", pa.int64())))
    with pytest.raises(lakestore.LakestoreError):
        table.write_arrow(bad)
    write = table.new_write(commit_user="u")
    write.write_arrow(_rows("a", [7, 8, 9]))
    write.prepare_commit()
    write.abort()
    assert sorted(os.listdir(os.path.join(table.path, "index"))) == index_files
    assert sorted(table.to_arrow()["id"].to_pylist()) == [1, 2, 3]


def test_a_concurrent_writer_of_the_same_buckets_index_conflicts(tmp_path):
    table = _table(tmp_path)
    table.write_arrow(_rows("a", [1]))
    first, second = table.new_write(commit_user="x"), table.new_write(commit_user="y")
    first.write_arrow(_rows("a", [2]))
    second.write_arrow(_rows("a", [3]))
    table.new_commit(commit_user="x").commit(first.prepare_commit(), 1)
    with pytest.raises(lakestore.CommitConflictError):
        table.new_commit(commit_user="y").commit(second.prepare_commit(), 1)
    assert sorted(table.to_arrow()["id"].to_pylist()) == [1, 2]


def test_options_are_checked(tmp_path):
    with pytest.raises(OptionError, match="dynamic-bucket.target-row-num"):
        _table(tmp_path, **{"dynamic-bucket.target-row-num": "-3"})
    table = _table(tmp_path / "ok", **{"dynamic-bucket.initial-buckets": "4", "dynamic-bucket.assigner-parallelism": "2"})
    table.write_arrow(_rows("a", [1, 2]))
    assert pc.sum(table.to_arrow()["id"]).as_py() == 3


def test_cross_partition_primary_keys_with_fixed_buckets_are_refused_at_creation(tmp_path):
    # bucket = -1 makes such a table Paimon's cross-partition upsert (tests/interop/test_java_cross_partition.py)
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    with pytest.raises(lakestore.SchemaMismatchError, match="partition keys"):
        catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], partition_keys=["dt"], options={"bucket": "2"})


def test_expiration_and_orphan_cleanup_keep_exactly_the_live_index_files(tmp_path):
    table = _table(tmp_path, **{"dynamic-bucket.target-row-num": "3"})
    for start in (0, 2, 5):
        table.write_arrow(_rows("a", list(range(start, start + 4))))
    index_dir = os.path.join(table.path, "index")
    assert len(os.listdir(index_dir)) > len(table.store.index_files())
    table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0, now_ms=2**62)
    table.maintenance.remove_orphan_files(older_than_ms=2**62)
    assert sorted(os.listdir(index_dir)) == sorted(f.file_name for f in table.store.index_files())
    table.write_arrow(_rows("a", [1, 50]))
    assert sorted(table.to_arrow()["id"].to_pylist()) == [*range(9), 50]
    assert sum(f.rows for f in table.store.index_files()) == 10
