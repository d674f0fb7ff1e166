from __future__ import annotations

import json
import os
import time

import pytest

import lakestore
from lakestore.errors import InvalidTagNameError, SnapshotNotFoundError, TagAlreadyExistsError, TagNotFoundError
from lakestore.lifecycle import auto_create_tags, expire_snapshots
from tests.lifecycle.conftest import SCHEMA, batch, rows

FUTURE = 4_102_444_800_000


def _table(catalog, name="db.t", **options):
    return catalog.create_table(
        name, schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1", "write-only": "true", **options}
    )


def test_tag_file_format_and_management(catalog):
    t = _table(catalog)
    snap = t.write_arrow(batch("a", [1], 1.0))
    t.manage.create_tag("v1", time_retained="1 h")
    doc = json.load(open(f"{t.path}/tag/tag-v1"))
    assert doc["id"] == snap.id and doc["baseManifestList"] == snap.base_manifest_list
    assert doc["tagTimeRetained"] == 3600.0
    assert isinstance(doc["tagCreateTime"], list) and len(doc["tagCreateTime"]) >= 5
    with pytest.raises(TagAlreadyExistsError):
        t.manage.create_tag("v1")
    with pytest.raises(InvalidTagNameError, match="must not be a number"):
        t.manage.create_tag("123")
    with pytest.raises(InvalidTagNameError, match="'/'"):
        t.manage.create_tag("a/b")
    with pytest.raises(lakestore.OptionError, match="time_retained"):
        t.manage.create_tag("v2", time_retained="")
    assert [x.name for x in t.manage.tags()] == ["v1"]
    with pytest.raises(SnapshotNotFoundError):
        t.manage.create_tag("nope", 42)
    t.manage.rename_tag("v1", "release")
    assert [(x.name, x.snapshot_id, x.time_retained_ms) for x in t.manage.tags()] == [("release", 1, 3_600_000)]
    with pytest.raises(TagNotFoundError):
        t.to_arrow(tag="v1")
    t.manage.delete_tag("release")
    assert t.manage.tags() == []
    assert rows(t.to_arrow()) == [("a", 1, 1.0)]  # snapshot 1 still exists: files untouched


def test_expired_tags_are_removed_by_expire(catalog):
    t = _table(catalog)
    t.write_arrow(batch("a", [1], 1.0))
    t.manage.create_tag("short", time_retained=1)
    t.manage.create_tag("forever")
    time.sleep(0.01)
    r = t.maintenance.expire_snapshots()
    assert r.expired_tags == ("short",)
    assert [x.name for x in t.manage.tags()] == ["forever"]


def test_rollback_to_snapshot_removes_later_snapshots_tags_and_files(catalog):
    t = _table(catalog)
    t.write_arrow(batch("a", range(3), 1.0))
    files_1 = {n for _, _, ns in os.walk(t.path) for n in ns if n.startswith("data-")}
    t.write_arrow(batch("a", range(3), 2.0), overwrite=True)
    t.write_arrow(batch("b", [1], 3.0))
    t.manage.create_tag("late", 3)
    t.manage.rollback_to(1)
    assert t.store.snapshot_manager.list_ids() == [1]
    assert t.manage.tags() == []
    assert {n for _, _, ns in os.walk(t.path) for n in ns if n.startswith("data-")} == files_1
    assert rows(t.to_arrow()) == [("a", i, 1.0) for i in range(3)]
    t.write_arrow(batch("c", [1], 4.0))
    assert t.latest_snapshot().id == 2
    assert rows(t.to_arrow()) == [("a", i, 1.0) for i in range(3)] + [("c", 1, 4.0)]
    with pytest.raises(SnapshotNotFoundError):
        t.manage.rollback_to(9)


def test_rollback_to_tag_of_expired_snapshot(catalog):
    t = _table(catalog)
    t.write_arrow(batch("a", range(3), 1.0))
    t.manage.create_tag("v1")
    for v in (2.0, 3.0, 4.0):
        t.write_arrow(batch("a", range(3), v), overwrite=True)
    expire_snapshots(t.store, num_retained_min=1, time_retained_ms=0, now_ms=FUTURE)
    assert t.store.snapshot_manager.list_ids() == [4]
    t.manage.rollback_to(tag="v1")
    assert t.store.snapshot_manager.list_ids() == [1]
    assert t.store.snapshot_manager.earliest_id() == 1
    assert rows(t.to_arrow()) == [("a", i, 1.0) for i in range(3)]
    assert t.maintenance.remove_orphan_files(older_than_ms=FUTURE).deleted == ()
    data = [n for _, _, ns in os.walk(t.path) for n in ns if n.startswith("data-")]
    assert len(data) == 1


def test_automatic_daily_tags(catalog):
    """Paimon's TagAutoCreation: the first snapshot is tagged with the day before its commit day;
    later snapshots once their commit time passes the end of the next day (see
    tests/lifecycle/test_auto_tags.py for the period options)."""
    options = {"tag.automatic-creation": "process-time", "tag.creation-period": "daily", "tag.num-retained-max": "2"}
    t = _table(catalog, **options, **{"write-only": "false"})
    t.write_arrow(batch("a", [1], 1.0))  # commit hook: tags yesterday's period
    assert len(t.manage.tags()) == 1
    day = 86_400_000
    base = t.latest_snapshot().time_millis
    created = []
    for d in range(1, 4):
        snapshot = t.write_arrow(batch("a", [d + 1], 1.0))
        set_snapshot_time(t, snapshot.id, base + d * day)
        # a new Table: ``t`` already walked past the snapshot (at its real time) after the commit
        created += auto_create_tags(lakestore.Table.from_path(t.path).store)
    assert len(created) == 3
    names = [x.name for x in t.manage.tags()]
    assert len(names) == 2 and sorted(names) == sorted(created[-2:])
    assert [x.snapshot_id for x in t.manage.tags()] == [3, 4]


def set_snapshot_time(table, snapshot_id: int, time_millis: int) -> None:
    """Rewrite a snapshot's commit time (tests of time-driven maintenance)."""
    path = table.store.snapshot_manager.path(snapshot_id)
    doc = json.loads(table.store.file_io.read_bytes(path))
    doc["timeMillis"] = time_millis
    table.store.file_io.write_bytes(path, json.dumps(doc).encode())


def test_options_of_lifecycle_are_validated(catalog):
    from lakestore.errors import OptionError

    with pytest.raises(OptionError):
        _table(catalog, "db.bad", **{"tag.automatic-creation": "sometimes"})
    with pytest.raises(OptionError):
        _table(catalog, "db.bad2", **{"tag.num-retained-max": "0"})
