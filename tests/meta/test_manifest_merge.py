"""Manifest merging keeps the base manifest list bounded; merged manifests stay readable."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.file_scan import live_entries
from lakestore.meta.manifest import DELETE
from tests._support import assert_same_rows
from tests.oracle.driver import oracle_available, oracle_read

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])


def _rows(i, dt="d1"):
    return pa.table({"dt": [dt], "id": pa.array([i], pa.int64()), "v": [f"v{i}"]})


PK_COMMITS = 50


def _list_sizes(t, snap):
    m = t.store.manifests()
    return len(m.read_list(snap.base_manifest_list)), len(m.read_list(snap.delta_manifest_list))


@pytest.fixture(scope="module")
def merged_tables(tmp_path_factory):
    cat = lakestore.Catalog(str(tmp_path_factory.mktemp("merge")))
    cat.create_database("db")
    ap = cat.create_table("db.ap", schema=SCHEMA, partition_keys=["dt"], options={"manifest.merge-min-count": "10", "write-only": "true"})
    pk = cat.create_table(
        "db.pk", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2", "manifest.merge-min-count": "10"}
    )
    for i in range(100):
        ap.write_arrow(_rows(i, f"d{i % 3}"))
    for i in range(PK_COMMITS):
        # the pk table updates a small key set, and every 10th commit overwrites a partition:
        # DELETE entries must survive merging correctly
        if i % 10 == 9:
            pk.write_arrow(_rows(i % 7, "d0"), overwrite={"dt": "d0"})
        else:
            pk.write_arrow(_rows(i % 7, f"d{i % 2}"))
    return ap, pk


def test_base_list_stays_bounded(merged_tables):
    for t in merged_tables:
        min_count = t.options.manifest_merge_min_count
        snaps = t.snapshots()
        assert len(snaps) >= (PK_COMMITS if t.primary_keys else 100)
        sizes = [_list_sizes(t, s) for s in snaps]
        assert max(base for base, _ in sizes) <= min_count, sizes
        assert sizes[-1][0] + sizes[-1][1] <= min_count + 1


def test_rows_intact_after_merging(merged_tables):
    ap, pk = merged_tables
    assert sorted(ap.to_arrow().column("id").to_pylist()) == list(range(100))
    assert ap.latest_snapshot().total_record_count == 100
    # model of the pk table
    model: dict = {}
    for i in range(PK_COMMITS):
        if i % 10 == 9:
            model = {k: v for k, v in model.items() if k[0] != "d0"}
            model[("d0", i % 7)] = f"v{i % 7}"
        else:
            model[(f"d{i % 2}", i % 7)] = f"v{i % 7}"
    assert {(r["dt"], r["id"]): r["v"] for r in pk.to_arrow().to_pylist()} == model
    # time travel across merges
    assert sorted(ap.to_arrow(snapshot_id=50).column("id").to_pylist()) == list(range(50))


def test_merging_drops_cancelled_entries(merged_tables):
    for t in merged_tables:
        m = t.store.manifests()
        snap = t.latest_snapshot()
        ever = sum(len(m.read_entries(meta.file_name)) for s in t.snapshots() for meta in m.read_list(s.delta_manifest_list))
        base = [e for meta in m.read_list(snap.base_manifest_list) for e in m.read_entries(meta.file_name)]
        live = live_entries(m, snap)
        if t.primary_keys:  # overwrites and compactions cancel entries: merging drops both halves
            assert len(base) < ever / 2, (len(base), ever)
        else:  # nothing cancelled: every entry ever written is still there, exactly once
            delta = [e for meta in m.read_list(snap.delta_manifest_list) for e in m.read_entries(meta.file_name)]
            assert len(base) + len(delta) == ever == len(live) == 100
        assert len(base) <= len(live) + 10 * 4  # at most min_count unmerged manifests of a few entries
        assert sum(e.kind == DELETE for e in base) <= 10 * 4


@pytest.mark.oracle
@pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")
def test_pypaimon_reads_merged_manifests(merged_tables):
    for t in merged_tables:
        assert_same_rows(oracle_read(t.path), t.to_arrow())
    ap = merged_tables[0]
    assert_same_rows(oracle_read(ap.path, snapshot_id=37), ap.to_arrow(snapshot_id=37))
