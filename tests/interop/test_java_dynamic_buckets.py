"""Dynamic bucket mode (``bucket = -1`` with a primary key) against Paimon Java 2.0.0 (the first
two cases also against 1.4.2): the same writes give the same bucket of every key and the same
hash index files in both engines, each engine continues the other's index, and overwrites and
compactions keep keys unique."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import fastavro
import numpy as np
import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import UnsupportedTableError
from lakestore.write.dynamic_bucket import assigner_ids, key_hashes, partition_hash
from lakestore.write.input import partition_spec
from tests.interop.conftest import same_rows

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
OPTIONS = {"dynamic-bucket.target-row-num": "4"}


def rows(dt: str, ids: list[int], tag: str) -> pa.Table:
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


def layout(table_path: str) -> dict[tuple[bytes, int], list[int]]:
    """(partition, bucket) -> sorted key hashes, from the latest snapshot's index manifest."""
    return layout_of(table_path, "HASH", only=True)


def layout_of(table_path: str, index_type: str, *, only: bool = False) -> dict[tuple[bytes, int], list[int]]:
    table = lakestore.Table.from_path(table_path)
    snapshot = table.latest_snapshot()
    assert snapshot is not None and snapshot.index_manifest
    out: dict[tuple[bytes, int], list[int]] = {}
    with open(Path(table_path) / "manifest" / snapshot.index_manifest, "rb") as f:
        for entry in fastavro.reader(f):
            assert entry["_INDEX_TYPE"] == index_type or not only
            if entry["_INDEX_TYPE"] != index_type:
                continue
            data = (Path(table_path) / "index" / entry["_FILE_NAME"]).read_bytes()
            assert entry["_ROW_COUNT"] == len(data) // 4
            out[(entry["_PARTITION"], entry["_BUCKET"])] = sorted(np.frombuffer(data, ">i4").tolist())
    return out


def buckets_of_keys(table_path: str) -> dict[tuple[str, int], list[int]]:
    """(dt, id) -> the buckets whose live files hold the key (a unique key has one)."""
    table = lakestore.Table.from_path(table_path)
    where: dict[tuple[str, int], set[int]] = defaultdict(set)
    for split in table.scan().plan():
        for f in split.files:
            data = table.store.split_reader().read_file(split.partition_values, split.bucket, f, ["dt", "id"], system=False)
            for dt, key in zip(data["dt"].to_pylist(), data["id"].to_pylist(), strict=True):
                where[(dt, key)].add(split.bucket)
    return {k: sorted(v) for k, v in where.items()}


def upserted(*batches: pa.Table) -> pa.Table:
    """The rows a deduplicate table holds after ``batches``: the last version of each key."""
    latest: dict[tuple[str, int], dict] = {}
    for batch in batches:
        for row in batch.to_pylist():
            latest[(row["dt"], row["id"])] = row
    return pa.Table.from_pylist(list(latest.values()), schema=SCHEMA)


BATCHES = [
    rows("a", list(range(10)), "x"),
    pa.concat_tables([rows("a", [3, 11, 12], "y"), rows("b", [1, 2, 3, 4, 5], "y")]),
    pa.concat_tables([rows("b", [5, 6, 7, 8, 9, 10], "z"), rows("a", [13, 0], "z")]),
]


def test_same_writes_give_the_same_buckets_and_index_files(java_any, catalog, warehouse):
    java = java_any
    ours = catalog.create_table("db.ours", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    java.create_table(warehouse, "db.java", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    theirs = catalog.get_table("db.java")
    for batch in BATCHES:
        ours.write_arrow(batch)
        java.write(warehouse, "db.java", batch)
        assert layout(ours.path) == layout(theirs.path)
    assert buckets_of_keys(ours.path) == buckets_of_keys(theirs.path)
    assert all(len(b) == 1 for b in buckets_of_keys(ours.path).values())
    same_rows(java.read(warehouse, "db.ours"), ours.to_arrow(), ["dt", "id"])
    same_rows(theirs.to_arrow(), ours.to_arrow(), ["dt", "id"])


@pytest.mark.parametrize("first", ["lakestore", "java"])
def test_each_engine_continues_the_others_index(java_any, catalog, warehouse, first):
    java = java_any
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    java.create_table(warehouse, "db.ref", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    table = catalog.get_table("db.t")
    for i, batch in enumerate(BATCHES):
        if (i % 2 == 0) == (first == "lakestore"):
            table.write_arrow(batch)
        else:
            java.write(warehouse, "db.t", batch)
        java.write(warehouse, "db.ref", batch)  # Java alone, for reference
    assert layout(table.path) == layout(catalog.get_table("db.ref").path)
    expected = catalog.get_table("db.ref").to_arrow()
    same_rows(table.to_arrow(), expected, ["dt", "id"])
    same_rows(java.read(warehouse, "db.t"), expected, ["dt", "id"])


def _keys_of_assigners(table: lakestore.Table, wanted: dict[int, int]) -> list[int]:
    """Ids of partition "a" whose keys three assigners would route to each assigner id, as many
    as ``wanted`` asks per id."""
    candidates = rows("a", list(range(5000)), "")
    hashes = key_hashes(table.schema, candidates)
    ids = assigner_ids(partition_hash(partition_spec(table.schema, ("a",)).binary), hashes, num_channels=3, num_assigners=3)
    picked: list[int] = []
    for assigner, count in wanted.items():
        picked += np.flatnonzero(ids == assigner)[:count].tolist()
    return sorted(picked)


def test_lakestore_continues_the_index_of_a_parallel_paimon_job(java, catalog, warehouse):
    """Three Java assigners leave partly filled buckets 33 and 5 (assigner 0 filled 0, 3, ..., 30,
    assigner 2 filled bucket 2); one assigner then fills them in Java's HashMap order: 33 (table
    slot 1 of 32) before 5, not in ascending order."""
    options = {"dynamic-bucket.target-row-num": "5"}
    for name in ("t", "ref"):
        java.create_table(warehouse, f"db.{name}", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)
    table = catalog.get_table("db.t")
    first = rows("a", _keys_of_assigners(table, {0: 58, 2: 7}), "p")
    for name in ("t", "ref"):
        java.write(warehouse, f"db.{name}", first, assigners=3)
    counts = {bucket: len(hashes) for (_, bucket), hashes in layout(table.path).items()}
    assert counts[33] == 3 and counts[5] == 2 and len(counts) == 14
    for batch in (rows("a", list(range(6000, 6003)), "s"), rows("a", list(range(7000, 7030)), "s")):
        table.write_arrow(batch)
        java.write(warehouse, "db.ref", batch)
        assert layout(table.path) == layout(catalog.get_table("db.ref").path)
    assert len(layout(table.path)[(partition_spec(table.schema, ("a",)).binary, 33)]) == 5  # 33 filled first
    same_rows(java.read(warehouse, "db.t"), catalog.get_table("db.ref").to_arrow(), ["dt", "id"])


def test_compactions_by_either_engine_keep_keys_unique(java, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    for batch in BATCHES:
        table.write_arrow(batch)
    table.compact(full=True)
    java.write(warehouse, "db.t", rows("a", [1, 20], "j"))
    java.compact(warehouse, "db.t")
    table.write_arrow(rows("a", [20, 21], "l"))
    expected = upserted(*BATCHES, rows("a", [1, 20], "j"), rows("a", [20, 21], "l"))
    same_rows(java.read(warehouse, "db.t"), expected, ["dt", "id"])
    same_rows(table.to_arrow(), expected, ["dt", "id"])
    assert all(len(b) == 1 for b in buckets_of_keys(table.path).values())


def test_partition_overwrite_starts_that_partitions_index_afresh(java, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    table.write_arrow(pa.concat_tables([rows("a", list(range(10)), "x"), rows("b", [1, 2], "x")]))
    table.write_arrow(rows("a", [100, 101], "o"), overwrite={"dt": "a"})
    index = layout(table.path)
    a_hashes = [h for (partition, _), hashes in index.items() for h in hashes if partition != _partition_of(index, table, "b")]
    assert len(a_hashes) == 2  # only the overwriting keys remain indexed in dt=a
    java.write(warehouse, "db.t", rows("a", [1, 100], "j"))
    expected = pa.concat_tables([rows("a", [101], "o"), rows("a", [1, 100], "j"), rows("b", [1, 2], "x")])
    same_rows(java.read(warehouse, "db.t"), expected, ["dt", "id"])
    same_rows(table.to_arrow(), expected, ["dt", "id"])
    assert all(len(b) == 1 for b in buckets_of_keys(table.path).values())


def _partition_of(index: dict[tuple[bytes, int], list[int]], table: lakestore.Table, dt: str) -> bytes:
    b_buckets = [split.partition for split in table.scan().plan() if split.partition_values == (dt,)]
    return b_buckets[0]


def test_cross_partition_upsert_tables_with_deletion_vectors_are_refused_by_name(java, catalog, warehouse):
    # primary key without the partition key: Paimon's global index over all partitions
    # (tests/interop/test_java_cross_partition.py), not implemented with deletion vectors
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=["id"], partition_keys=["dt"], options={"deletion-vectors.enabled": "true"})
    table = catalog.get_table("db.t")
    with pytest.raises(UnsupportedTableError, match="cross-partition") as info:
        table.write_arrow(rows("b", [1], "l"))
    assert info.value.options == ("bucket",)
    assert table.latest_snapshot() is None
    assert not list(Path(table.path).glob("dt=*"))


def test_deletion_vectors_on_a_dynamic_bucket_table(java, catalog, warehouse):
    options = {**OPTIONS, "deletion-vectors.enabled": "true"}
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)
    java.create_table(warehouse, "db.ref", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=options)
    for i, batch in enumerate(BATCHES):
        if i == 1:
            java.write(warehouse, "db.t", batch)
        else:
            catalog.get_table("db.t").write_arrow(batch)
        java.write(warehouse, "db.ref", batch)
        expected = upserted(*BATCHES[: i + 1])
        same_rows(catalog.get_table("db.t").to_arrow(), expected, ["dt", "id"])
        same_rows(java.read(warehouse, "db.t"), expected, ["dt", "id"])
    types = {f.index_type for f in catalog.get_table("db.t").store.index_files()}
    assert types == {"HASH", "DELETION_VECTORS"}
    assert layout_of(table.path, "HASH") == layout_of(catalog.get_table("db.ref").path, "HASH")


def test_expiration_by_lakestore_keeps_what_java_needs(java, catalog, warehouse):
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options=OPTIONS)
    for i, batch in enumerate(BATCHES):
        if i % 2:
            catalog.get_table("db.t").write_arrow(batch)
        else:
            java.write(warehouse, "db.t", batch)
    table = catalog.get_table("db.t")
    table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0, now_ms=2**62)
    table.maintenance.remove_orphan_files(older_than_ms=2**62)
    index_dir = Path(table.path) / "index"
    assert sorted(p.name for p in index_dir.iterdir()) == sorted(f.file_name for f in table.store.index_files())
    java.write(warehouse, "db.t", rows("a", [0, 99], "j"))
    expected = upserted(*BATCHES, rows("a", [0, 99], "j"))
    same_rows(java.read(warehouse, "db.t"), expected, ["dt", "id"])
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["dt", "id"])
    assert all(len(b) == 1 for b in buckets_of_keys(table.path).values())
