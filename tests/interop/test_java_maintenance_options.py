"""Maintenance options against Paimon 2.0.0 Java: the same table state is maintained by Java on
one copy and by lakestore on another, and both must leave the same result.

- automatic tags (``tag.automatic-creation`` process-time, ``tag.creation-period``,
  ``tag.period-formatter``, ``tag.creation-period-duration``, ``tag.automatic-completion``,
  ``tag.num-retained-max``, ``sink.process-time-zone``): Java's committer tags after a commit;
  lakestore's ``auto_create_tags`` on a copy of that very state (without Java's tags) must create
  the same names on the same snapshots;
- ``consumer.expiration-time``: a consumer not updated within it is deleted and stops protecting
  snapshots (Java's committer, lakestore's ``expire_snapshots``);
- ``compaction.force-rewrite-all-files``: a full compaction of a bucket that is already one
  top-level run rewrites every file (primary-key and append tables);
- ``compaction.total-size-threshold``: a bucket of several sorted runs smaller than it is
  compacted fully by the writer (Paimon's EarlyFullCompaction);
- full compaction of a deletion-vector table already at the top level rewrites the files that
  have a vector (Paimon's pickFullCompaction)."""

from __future__ import annotations

import json
import os
import shutil
import time

import pyarrow as pa
import pytest

import lakestore
from lakestore.lifecycle import auto_create_tags
from lakestore.meta.schema_change import SetOption
from tests._support import sort_rows
from tests.compact._tables import live_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
HOUR = 3_600_000


def batch(ids, v: str) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": ids, "v": [v] * len(ids)}, schema=SCHEMA)


def copy_warehouse(warehouse, name: str):
    target = warehouse.parent / name
    shutil.copytree(warehouse, target)
    return target


def set_snapshot_time(table: lakestore.Table, snapshot_id: int, time_millis: int) -> None:
    path = table.store.snapshot_manager.path(snapshot_id)
    doc = json.loads(table.store.file_io.read_bytes(path))
    doc["timeMillis"] = time_millis
    table.store.file_io.write_bytes(path, json.dumps(doc).encode())


def tag_map(table: lakestore.Table) -> dict[str, int]:
    return {t.name: t.snapshot_id for t in table.manage.tags()}


def same_rows(java, warehouse, table: lakestore.Table) -> None:
    ours = table.to_arrow()
    theirs = java.read(warehouse, "db.t")
    assert sort_rows(ours.select(theirs.column_names)) == sort_rows(theirs)


# -- automatic tags --------------------------------------------------------------------------------
# Snapshot commit times (hours after a base at a day's start): spread over days and hours, so that
# every period below creates several tags, some periods are skipped and some hold several snapshots.
OFFSETS_H = [0.2, 0.7, 1.5, 2.05, 5.5, 9.9, 26.0, 27.3, 49.5, 50.25]


@pytest.mark.parametrize(
    "options",
    [
        {"tag.creation-period": "daily"},
        {"tag.creation-period": "daily", "tag.period-formatter": "without_dashes"},
        {"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"},
        {"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces", "tag.num-retained-max": "3"},
        {"tag.creation-period": "two-hours", "tag.period-formatter": "without_dashes"},
        {"tag.creation-period-duration": "40 min"},
        {"tag.creation-period": "hourly", "tag.creation-delay": "20 min", "sink.process-time-zone": "Asia/Kolkata"},
        {"tag.creation-period": "hourly", "tag.automatic-completion": "true"},
    ],
    ids=lambda o: ",".join(f"{k.split('.')[-1]}={v}" for k, v in o.items()),
)
def test_automatic_tags_named_as_java(java, catalog, warehouse, options):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    base = (int(time.time() * 1000) // (24 * HOUR) - 4) * 24 * HOUR  # a UTC day's start, 4 days ago
    for i, offset in enumerate(OFFSETS_H):
        snapshot = table.write_arrow(batch([i], f"v{i}"))
        set_snapshot_time(table, snapshot.id, base + int(offset * HOUR))
    # Java's committer expires snapshots after tagging: keep them all, to tag the same ones here
    changes = [
        SetOption("write-only", "false"),
        SetOption("snapshot.num-retained.min", "100"),
        SetOption("tag.automatic-creation", "process-time"),
    ]
    catalog.alter_table("db.t", changes + [SetOption(k, v) for k, v in options.items()])
    java.write(warehouse, "db.t", batch([100], "java"))  # Java's committer creates the tags
    java_tags = tag_map(catalog.get_table("db.t"))
    assert len(java_tags) >= 2

    ours_wh = copy_warehouse(warehouse, "ours")
    ours = lakestore.Catalog(str(ours_wh)).get_table("db.t")
    shutil.rmtree(f"{ours.path}/tag")
    created = auto_create_tags(ours.store)
    assert tag_map(ours) == java_tags
    assert set(created) >= set(java_tags)


# -- consumers ---------------------------------------------------------------------------------------
def test_consumer_expiration_as_java(java, catalog, warehouse):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    for i in range(4):
        table.write_arrow(batch([i], "x"))
    table.manage.reset_consumer("stale", 1)
    table.manage.reset_consumer("fresh", 3)
    retention = {"consumer.expiration-time": "1 d", "snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms"}
    catalog.alter_table("db.t", [SetOption(k, v) for k, v in retention.items()])
    stale = f"{table.store.metadata_path}/consumer/consumer-stale"
    two_days_ago = time.time() - 2 * 86_400
    os.utime(stale, (two_days_ago, two_days_ago))
    ours = lakestore.Catalog(str(copy_warehouse(warehouse, "ours"))).get_table("db.t")

    java.write(warehouse, "db.t", batch([10], "java"))  # Java's committer: consumers, then snapshots
    theirs = catalog.get_table("db.t")
    ours.write_arrow(batch([10], "java"))  # lakestore expires after commit (retention options are set)
    assert ours.manage.consumers() == theirs.manage.consumers() == {"fresh": 3}
    # the stale consumer (at 1) no longer protects snapshots 1-2; the fresh one keeps 3 on
    assert ours.store.snapshot_manager.earliest_id() == theirs.store.snapshot_manager.earliest_id() == 3


# -- compaction ----------------------------------------------------------------------------------
def _shape(table: lakestore.Table) -> list[tuple[int, int]]:
    return sorted((f.level, f.row_count) for f in live_files(table))


@pytest.mark.parametrize("primary_key", [True, False])
def test_force_rewrite_all_files_as_java(java, catalog, warehouse, primary_key):
    keys = ["id"] if primary_key else []
    options = {"bucket": "2", "write-only": "true", **({} if primary_key else {"bucket-key": "id"})}
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=keys, options=options)
    for i in range(3):
        table.write_arrow(batch(range(i * 10, i * 10 + 10), f"v{i}"))
    table.compact(full=True)
    before = {f.file_name for f in live_files(table)}
    assert table.compact(full=True) == []  # nothing to do without the option
    catalog.alter_table("db.t", [SetOption("write-only", "false"), SetOption("compaction.force-rewrite-all-files", "true")])
    ours = lakestore.Catalog(str(copy_warehouse(warehouse, "ours"))).get_table("db.t")

    java.compact(warehouse, "db.t")
    theirs = catalog.get_table("db.t")
    ours.compact(full=True)
    for t in (theirs, ours):
        assert not before & {f.file_name for f in live_files(t)}  # every file rewritten
    assert _shape(ours) == _shape(theirs)
    same_rows(java, warehouse, ours)


def test_full_compaction_rewrites_files_with_deletion_vectors_as_java(java, catalog, warehouse):
    options = {"bucket": "1", "deletion-vectors.enabled": "true", "write-only": "true"}
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=options)
    table.write_arrow(batch(range(20), "a"))
    table.compact(full=True)
    table.write_arrow(batch(range(5), "b"))
    table.compact()  # level 0 up: the top file gets a deletion vector
    vectored = {f.file_name for f in live_files(table) if f.level == 5}
    assert vectored and table.store.live_files()  # the top file has a vector: a full compaction rewrites it
    catalog.alter_table("db.t", [SetOption("write-only", "false")])
    ours = lakestore.Catalog(str(copy_warehouse(warehouse, "ours"))).get_table("db.t")

    java.compact(warehouse, "db.t")
    theirs = catalog.get_table("db.t")
    ours.compact(full=True)
    assert _shape(ours) == _shape(theirs)
    for t in (theirs, ours):
        assert not vectored & {f.file_name for f in live_files(t)}
    same_rows(java, warehouse, ours)


def test_total_size_threshold_compacts_fully_as_java(java, catalog, warehouse):
    options = {"bucket": "1", "compaction.total-size-threshold": "64 mb"}
    java.create_table(warehouse, "db.j", SCHEMA, primary_keys=["id"], options=options)
    ours = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options=options)
    for i in range(3):
        java.write(warehouse, "db.j", batch(range(i, i + 5), f"v{i}"))
        ours.write_arrow(batch(range(i, i + 5), f"v{i}"))
    theirs = catalog.get_table("db.j")
    kinds = [s["commit_kind"] for s in java.snapshots(warehouse, "db.j")]
    assert kinds == [ours.snapshot(i).commit_kind for i in ours.store.snapshot_manager.list_ids()]
    assert "COMPACT" in kinds
    assert _shape(ours) == _shape(theirs)
    assert sort_rows(ours.to_arrow()) == sort_rows(theirs.to_arrow())


def test_force_rewrite_all_files_leaves_bucket_unaware_tables_as_java(java, catalog, warehouse):
    """Bucket-unaware append tables compact through Paimon's AppendCompactCoordinator, which does
    not read ``compaction.force-rewrite-all-files``: a compacted table stays as it is."""
    table = catalog.create_table("db.t", schema=SCHEMA, options={"write-only": "true"})
    for i in range(3):
        table.write_arrow(batch(range(i * 10, i * 10 + 10), f"v{i}"))
    table.compact(full=True)
    before = sorted(f.file_name for f in live_files(table))
    assert len(before) == 1
    catalog.alter_table("db.t", [SetOption("write-only", "false"), SetOption("compaction.force-rewrite-all-files", "true")])
    ours = lakestore.Catalog(str(copy_warehouse(warehouse, "ours"))).get_table("db.t")
    latest = table.store.snapshot_manager.latest_id()
    assert java.compact(warehouse, "db.t") == latest  # nothing committed
    assert ours.compact(full=True) == []
    assert sorted(f.file_name for f in live_files(ours)) == before
