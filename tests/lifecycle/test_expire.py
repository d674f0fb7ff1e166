from __future__ import annotations

import json
import os
import time

import pytest

from lakestore.errors import OptionError
from lakestore.lifecycle import expire_snapshots
from lakestore.lifecycle.expire import expire_until
from tests.lifecycle.conftest import SCHEMA, batch, rows

FUTURE = 4_102_444_800_000


def _data_files(path: str) -> set[str]:
    return {os.path.join(r, n) for r, _, ns in os.walk(path) for n in ns if n.startswith("data-")}


def _pk_table(catalog, name="db.t", **options):
    return catalog.create_table(
        name, schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1", "write-only": "true", **options}
    )


def test_retention_min_max_and_time(catalog):
    t = _pk_table(catalog)
    snaps = []
    for i in range(6):
        snaps.append(t.write_arrow(batch("a", [i], float(i))))
        time.sleep(0.01)  # distinct commit times
    # nothing is old enough: only num-retained.max removes snapshots
    r = expire_snapshots(t.store, num_retained_min=1, num_retained_max=4, time_retained_ms=10**12)
    assert r.expired_snapshot_ids == (1, 2)
    assert t.store.snapshot_manager.list_ids() == [3, 4, 5, 6]
    # a snapshot goes when it is older than the retention (Paimon's check): 3 and 4 go, 5 stops the scan
    now = snaps[5].time_millis + 1000
    older_than = snaps[3].time_millis + 1  # snapshot 4 is older than this, snapshot 5 is not
    r = expire_snapshots(t.store, num_retained_min=1, time_retained_ms=now - older_than, now_ms=now)
    assert r.expired_snapshot_ids == (3, 4)
    # at least num-retained.min stay
    r = expire_snapshots(t.store, num_retained_min=2, time_retained_ms=0, now_ms=FUTURE)
    assert t.store.snapshot_manager.list_ids() == [5, 6]
    assert open(f"{t.path}/snapshot/EARLIEST").read() == "5"
    assert rows(t.to_arrow()) == [("a", i, float(i)) for i in range(6)]


def test_bad_retention_arguments(catalog):
    t = _pk_table(catalog)
    with pytest.raises(OptionError):
        t.maintenance.expire_snapshots(num_retained_min=0)
    with pytest.raises(OptionError):
        t.maintenance.expire_snapshots(num_retained_min=5, num_retained_max=2)


def test_expire_limit_option(catalog):
    t = _pk_table(catalog, **{"snapshot.expire.limit": "2"})
    for i in range(6):
        t.write_arrow(batch("a", [i], 1.0))
    r = expire_snapshots(t.store, num_retained_min=1, time_retained_ms=0, now_ms=FUTURE)
    assert r.expired_snapshot_ids == (1, 2)


def test_deletes_exactly_unreferenced_files_and_not_other_tables(catalog):
    t = _pk_table(catalog)
    other = _pk_table(catalog, "db.other")
    other.write_arrow(batch("a", range(3), 1.0))
    other_files = set(os.listdir(f"{other.path}/manifest")), _data_files(other.path)
    t.write_arrow(batch("a", range(3), 1.0))
    first_files = _data_files(t.path)
    t.write_arrow(batch("a", range(3), 2.0), overwrite=True)  # snapshot 2 removes snapshot 1's file
    t.write_arrow(batch("b", range(2), 3.0))
    live = _data_files(t.path) - first_files
    r = expire_snapshots(t.store, num_retained_min=1, time_retained_ms=0, now_ms=FUTURE)
    assert r.expired_snapshot_ids == (1, 2)
    assert r.deleted_data_files == 1
    assert _data_files(t.path) == live
    # every manifest left is referenced by snapshot 3
    snap = t.latest_snapshot()
    store = t.store.manifests()
    wanted = {snap.base_manifest_list, snap.delta_manifest_list}
    for name in list(wanted):
        wanted |= {m.file_name for m in store.read_list(name)}
    assert set(os.listdir(f"{t.path}/manifest")) == wanted
    assert (set(os.listdir(f"{other.path}/manifest")), _data_files(other.path)) == other_files
    assert rows(t.to_arrow()) == [("a", i, 2.0) for i in range(3)] + [("b", i, 3.0) for i in range(2)]


def test_tags_and_consumers_protect(catalog):
    t = _pk_table(catalog)
    t.write_arrow(batch("a", range(3), 1.0))
    t.manage.create_tag("keep", 1)
    for v in (2.0, 3.0, 4.0):
        t.write_arrow(batch("a", range(3), v), overwrite=True)
    os.makedirs(f"{t.path}/consumer")
    with open(f"{t.path}/consumer/consumer-job", "w") as fh:
        json.dump({"nextSnapshot": 3}, fh)
    r = expire_snapshots(t.store, num_retained_min=1, time_retained_ms=0, now_ms=FUTURE)
    assert r.expired_snapshot_ids == (1, 2)  # the consumer still needs snapshot 3
    assert rows(t.to_arrow(tag="keep")) == [("a", i, 1.0) for i in range(3)]
    assert rows(t.to_arrow(snapshot_id=3)) == [("a", i, 3.0) for i in range(3)]
    os.remove(f"{t.path}/consumer/consumer-job")
    expire_snapshots(t.store, num_retained_min=1, time_retained_ms=0, now_ms=FUTURE)
    assert t.store.snapshot_manager.list_ids() == [4]
    t.manage.delete_tag("keep")  # its snapshot expired: the tag's files go with it
    assert len(_data_files(t.path)) == 1


def test_rerun_after_crash_part_way(catalog, monkeypatch):
    t = _pk_table(catalog)
    for v in range(5):
        t.write_arrow(batch("a", range(2), float(v)), overwrite=True)
    real_delete = t.store.file_io.delete
    calls = {"n": 0}

    def crashing_delete(path):
        if "/snapshot/snapshot-" in path:
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError("crash")
        real_delete(path)

    monkeypatch.setattr(t.store.file_io, "delete", crashing_delete)
    with pytest.raises(OSError):
        expire_until(t.store, 1, 5)
    monkeypatch.setattr(t.store.file_io, "delete", real_delete)
    assert t.store.snapshot_manager.list_ids() == [2, 3, 4, 5]  # manifests of 2..4 are gone already
    r = expire_snapshots(t.store, num_retained_min=1, time_retained_ms=0, now_ms=FUTURE)
    assert r.expired_snapshot_ids == (2, 3, 4)
    assert rows(t.to_arrow()) == [("a", 0, 4.0), ("a", 1, 4.0)]
    assert len(_data_files(t.path)) == 1
    assert t.maintenance.remove_orphan_files(older_than_ms=FUTURE).deleted == ()


def test_expire_after_commit_when_retention_is_set(catalog):
    t = _pk_table(catalog, **{"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3", "snapshot.expire.execution-mode": "sync"})
    for i in range(6):
        t.write_arrow(batch("a", [i], 1.0))
    assert t.store.snapshot_manager.list_ids() == [4, 5, 6]
    plain = _pk_table(catalog, "db.plain")
    for i in range(12):
        plain.write_arrow(batch("a", [i], 1.0))
    assert len(plain.store.snapshot_manager.list_ids()) == 12  # no retention options: nothing expires
