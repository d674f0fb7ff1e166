"""ManifestFileMeta's bucket and level ranges (Paimon 1.1+: ``_MIN_BUCKET _MAX_BUCKET _MIN_LEVEL
_MAX_LEVEL``; row ids null without row tracking) on every manifest lakestore writes, and the
scans they let skip manifests: a predicate pinning the bucket key, a one-bucket compaction, and
deletion-vector reads that never read level 0."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.compact import compact_bucket
from lakestore.meta.file_scan import data_manifests, live_entries
from lakestore.meta.manifest import ManifestStore
from tests._support import assert_same_rows
from tests.oracle.driver import oracle_available, oracle_manifests, oracle_read

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), ("v", pa.float64())])


def _batch(ids, value: float, dt: str = "a") -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def _all_metas(t):
    store = t.store.manifests()
    out = []
    for snapshot in t.snapshots():
        out += data_manifests(store, snapshot)
        if snapshot.changelog_manifest_list:
            out += store.read_list(snapshot.changelog_manifest_list)
    return out


def test_every_manifest_records_bucket_and_level_ranges(catalog):
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "4", "manifest.merge-min-count": "2", "changelog-producer": "input"},
    )
    for i in range(4):
        t.write_arrow(_batch(range(i, 20), float(i), dt="a" if i % 2 else "b"))
    t.compact(full=True)
    store = t.store.manifests()
    metas = _all_metas(t)
    assert any(m.num_deleted_files for m in metas)  # the compaction's delta
    merged = store.read_list(t.latest_snapshot().base_manifest_list)
    assert merged  # merged base manifests carry the ranges too
    for meta in metas:
        entries = store.read_entries(meta.file_name)
        assert (meta.min_bucket, meta.max_bucket) == (min(e.bucket for e in entries), max(e.bucket for e in entries))
        assert (meta.min_level, meta.max_level) == (min(e.file.level for e in entries), max(e.file.level for e in entries))
        assert {e.total_buckets for e in entries} == {meta.total_buckets}
    if oracle_available():
        decoded = oracle_manifests(t.path)["lists"]
        for name in ("baseManifestList", "deltaManifestList"):
            for manifest in decoded[name]["manifests"]:
                m = manifest["meta"]
                buckets = [e["_BUCKET"] for e in manifest["entries"]]
                levels = [e["_FILE"]["_LEVEL"] for e in manifest["entries"]]
                assert (m["_MIN_BUCKET"], m["_MAX_BUCKET"], m["_MIN_LEVEL"], m["_MAX_LEVEL"]) == (
                    min(buckets),
                    max(buckets),
                    min(levels),
                    max(levels),
                )
                assert m["_MIN_ROW_ID"] is None and m["_MAX_ROW_ID"] is None


class _Counting(ManifestStore):
    """A ManifestStore that records which manifests were read."""

    read: list[str]

    def read_entries(self, name):
        self.read.append(name)
        return super().read_entries(name)


def _counting(t) -> _Counting:
    store = _Counting(t.store.file_io, t.path, compression=t.options.manifest_compression)
    store.read = []
    return store


def test_a_predicate_pinning_the_bucket_key_skips_manifests_of_other_buckets(catalog, monkeypatch):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "8", "manifest.merge-min-count": "1000"})
    for i in range(16):  # one key per commit: most commits touch one bucket each
        t.write_arrow(_batch([i], float(i)))
    store = _counting(t)
    monkeypatch.setattr(type(t.store), "manifests", lambda self: store)
    manifests = {m.file_name for m in data_manifests(store, t.latest_snapshot())}
    everything = t.to_arrow()
    assert everything.num_rows == 16 and set(store.read) == manifests
    store.read.clear()
    one = t.to_arrow(filter=lakestore.col("id") == 5)
    assert one.to_pylist() == [{"dt": "a", "id": 5, "v": 5.0}]
    assert 0 < len(set(store.read)) < len(manifests) / 2
    # a one-bucket compaction reads only the manifests of its bucket
    monkeypatch.undo()
    entries = live_entries(t.store.manifests(), t.latest_snapshot())
    target = entries[0]
    files = [e.file for e in entries if e.bucket == target.bucket]
    store = _counting(t)
    monkeypatch.setattr(type(t.store), "manifests", lambda self: store)
    compact_bucket(t.store, target.partition, target.bucket, full=True)
    assert len(set(store.read)) == len(files)  # one file per commit's manifest


def test_deletion_vector_reads_skip_manifests_holding_only_level0(catalog, monkeypatch):
    t = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "1", "deletion-vectors.enabled": "true", "write-only": "true", "manifest.merge-min-count": "1000"},
    )
    t.write_arrow(_batch(range(10), 1.0))
    t.compact(full=True)
    t.write_arrow(_batch(range(5), 2.0))  # write-only: stays on level 0, invisible to DV reads
    store = _counting(t)
    monkeypatch.setattr(type(t.store), "manifests", lambda self: store)
    rows = t.to_arrow()
    assert sorted(rows.column("v").to_pylist()) == [1.0] * 10
    level0_only = [m.file_name for m in data_manifests(store, t.latest_snapshot()) if m.max_level == 0]
    assert level0_only and not set(level0_only) & set(store.read)
    if oracle_available():
        assert_same_rows(oracle_read(t.path), rows, ["dt", "id"])
