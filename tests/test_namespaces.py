"""``table.maintenance`` and ``table.manage``: the table's maintenance and its tags, branches,
rollback and consumers, each verb through its namespace with a real outcome (files on disk, rows
read back); the flat methods they replace are gone from ``Table``, and a system table refuses
the namespaces' writing verbs by name."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

import lakestore
from lakestore import TableMaintenance, TableManagement
from lakestore.errors import TagNotFoundError, UnsupportedTableError

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
FAR_FUTURE_MS = int(time.time() * 1000) + 10 * 86_400_000


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


@pytest.fixture
def table(catalog):
    return catalog.create_table(
        "db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1", "write-only": "true"}
    )


def _rows(dt: str, ids, value: float) -> pa.Table:
    ids = list(ids)
    return pa.table({"dt": [dt] * len(ids), "id": ids, "v": [value] * len(ids)}, schema=SCHEMA)


def _read(table: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


# -- the namespaces and what is gone -----------------------------------------------------------
MOVED_TO_MAINTENANCE = ("expire_snapshots", "expire_partitions", "remove_orphan_files", "check")
MOVED_TO_MANAGE = (
    "create_tag",
    "delete_tag",
    "rename_tag",
    "tags",
    "create_branch",
    "delete_branch",
    "fast_forward",
    "branches",
    "rollback_to",
    "consumers",
    "reset_consumer",
)


def test_the_flat_methods_left_the_class_and_the_namespaces_have_them(table):
    for name in MOVED_TO_MAINTENANCE + MOVED_TO_MANAGE:
        assert name not in vars(lakestore.Table), f"Table.{name} is back: call table.maintenance.{name} / table.manage.{name}"
        namespace = "maintenance" if name in MOVED_TO_MAINTENANCE else "manage"
        with pytest.warns(DeprecationWarning, match=rf"use table\.{namespace}\.{name}"):  # the old name, for one minor release
            assert getattr(table, name).__func__ is getattr(getattr(table, namespace), name).__func__
    assert isinstance(table.maintenance, TableMaintenance) and isinstance(table.manage, TableManagement)
    for name in MOVED_TO_MAINTENANCE:
        assert callable(getattr(table.maintenance, name))
    for name in MOVED_TO_MANAGE:
        assert callable(getattr(table.manage, name))
    # kept on the table: the compaction shortcut and drop_partitions (a change of the data)
    assert callable(table.compact) and callable(table.drop_partitions)


MOVED_TO_STORE = (
    "file_io",
    "metadata_path",
    "schema_manager",
    "snapshot_manager",
    "manifests",
    "split_reader",
    "schema_at",
    "live_files",
    "delta_files",
    "index_files",
)
# What a user calls on a table; the plumbing is ``table.store`` (its ``FileStore``).
TABLE_MEMBERS = {
    # what the table is
    "path", "branch", "identifier", "schema", "options", "arrow_schema", "partition_keys", "primary_keys", "store",
    "from_path", "on_branch",
    # snapshots
    "latest_snapshot", "snapshot", "snapshots", "find_commit",
    # reads
    "scan", "to_arrow", "to_batches", "to_arrow_batch_reader", "to_pandas", "to_polars", "to_duckdb", "read_changes", "stream",
    # writes and row-level changes
    "new_write", "new_commit", "write_arrow", "delete", "update", "upsert", "update_columns", "drop_partitions", "compact",
    # namespaces
    "inspect", "maintenance", "manage",
}  # fmt: skip


def test_the_table_is_a_facade_and_its_plumbing_moved_to_the_store_with_a_deprecation(table):
    public = {name for name in dir(lakestore.Table) if not name.startswith("_")} | ({"store"} & set(vars(table)))
    assert public == TABLE_MEMBERS, f"added: {sorted(public - TABLE_MEMBERS)}, gone: {sorted(TABLE_MEMBERS - public)}"
    table.write_arrow(_rows("a", [1, 2], 1.0))
    snapshot = table.latest_snapshot()
    for name in MOVED_TO_STORE:
        with pytest.warns(DeprecationWarning, match=rf"Table\.{name} is deprecated .* use table\.store\.{name}"):
            old = getattr(table, name)
        new = getattr(table.store, name)
        if callable(new) and name not in ("file_io",):
            assert old == new  # the same bound method of the same store
        else:
            assert old is new
    assert [f.file_name for f in table.store.live_files(snapshot)] == [f.file_name for f in table.store.live_files()]
    with pytest.warns(DeprecationWarning, match=r"use table\.scan\(.*\)\.snapshot\(\)"):
        assert table.resolve_snapshot(snapshot_id=1).id == table.scan(snapshot_id=1).snapshot().id == 1
    with pytest.warns(DeprecationWarning, match=r"use table\.scan\(.*\)\.plan\(\)"):
        assert table.plan(snapshot_id=1) == table.scan(snapshot_id=1).plan()
    assert table.scan().snapshot() == snapshot and table.scan(tag=None).snapshot() == snapshot
    with pytest.raises(ValueError, match="range of snapshots"):
        table.scan(incremental_between=(0, 1)).snapshot()


def test_a_system_table_refuses_the_writing_verbs_of_the_namespaces(catalog, table):
    table.write_arrow(_rows("a", [1], 1.0))
    files = catalog.get_system_table("db.t$files")
    for call in (
        lambda: files.manage.create_tag("x"),
        lambda: files.manage.rollback_to(1),
        lambda: files.manage.create_branch("b"),
        lambda: files.maintenance.expire_snapshots(),
        lambda: files.maintenance.compact(),
    ):
        with pytest.raises(UnsupportedTableError, match=r"system table db\.t\$files"):
            call()
    with pytest.raises(AttributeError):
        files.manage.no_such_verb()  # noqa: B018
    assert table.manage.tags() == [] and table.manage.branches() == [] and [s.id for s in table.snapshots()] == [1]


# -- table.maintenance ---------------------------------------------------------------------------
def test_compact_through_the_namespace_and_the_shortcut(table):
    for i in range(3):
        table.write_arrow(_rows("a", [i % 2], float(i)))
    assert {f.level for f in table.store.live_files()} == {0} and len(table.store.live_files()) == 3
    snapshots = table.maintenance.compact(full=True)
    assert [s.commit_kind for s in snapshots] == ["COMPACT"]
    assert len(table.store.live_files()) == 1 and table.store.live_files()[0].level > 0
    assert _read(table.to_arrow()) == [("a", 0, 2.0), ("a", 1, 1.0)]
    table.write_arrow(_rows("a", [5], 5.0))
    assert [s.commit_kind for s in table.compact(full=True)] == ["COMPACT"]  # the shortcut
    assert len(table.store.live_files()) == 1


def test_expire_snapshots_deletes_their_files(table):
    for i in range(4):
        table.write_arrow(_rows("a", [i], float(i)))
    snapshot_dir = f"{table.path}/snapshot"
    assert {f"snapshot-{i}" for i in range(1, 5)} <= set(os.listdir(snapshot_dir))
    result = table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1, time_retained_ms=0, now_ms=FAR_FUTURE_MS)
    assert result.expired_snapshot_ids == (1, 2, 3)
    assert [s.id for s in table.snapshots()] == [4]
    assert not {f"snapshot-{i}" for i in range(1, 4)} & set(os.listdir(snapshot_dir))
    assert _read(table.to_arrow()) == [("a", i, float(i)) for i in range(4)]


def test_expire_partitions_drops_the_old_ones(catalog):
    table = catalog.create_table(
        "db.p",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": "1", "partition.expiration-time": "2 d", "partition.expiration-check-interval": "365 d"},
    )
    table.write_arrow(pa.table({"dt": ["2099-06-01", "2099-06-09"], "id": [1, 2], "v": [1.0, 2.0]}, schema=SCHEMA))
    now_ms = int(time.mktime(time.strptime("2099-06-10 12:00", "%Y-%m-%d %H:%M")) * 1000)
    assert table.maintenance.expire_partitions(now_ms=now_ms) == [{"dt": "2099-06-01"}]
    assert table.latest_snapshot().commit_kind == "OVERWRITE"
    assert _read(table.to_arrow()) == [("2099-06-09", 2, 2.0)]


def test_remove_orphan_files_dry_run_lists_and_keeps_then_deletes(table):
    table.write_arrow(_rows("a", [1], 1.0))
    stray = f"{table.path}/dt=a/bucket-0/data-stray-0.parquet"
    with open(stray, "wb") as f:
        f.write(b"junk")
    dry = table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS, dry_run=True)
    assert dry.dry_run and dry.deleted == ("dt=a/bucket-0/data-stray-0.parquet",)
    assert os.path.exists(stray)
    done = table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS)
    assert done.deleted == dry.deleted and not os.path.exists(stray)
    assert _read(table.to_arrow()) == [("a", 1, 1.0)]


def test_check_finds_a_commit_that_did_not_land(table):
    table.write_arrow(_rows("a", [1], 1.0))
    assert table.maintenance.check().ok

    def fail_before_publish(point: str) -> None:
        if point == "before-publish":
            raise RuntimeError(point)

    write = table.new_write(commit_user="u")
    write.write_arrow(_rows("a", [2], 2.0))
    messages = write.prepare_commit()
    with pytest.raises(RuntimeError, match="before-publish"):
        table.new_commit(commit_user="u", hook=fail_before_publish).commit(messages)
    check = table.maintenance.check()
    assert not check.ok and [c.row_count for c in check.unreferenced_commits] == [1]
    assert all(os.path.exists(p) for c in check.unreferenced_commits for p in c.data_files)


# -- table.manage --------------------------------------------------------------------------------
def test_tags_through_the_namespace(table):
    first = table.write_arrow(_rows("a", [1], 1.0))
    tag = table.manage.create_tag("v1", time_retained="1 h")
    assert tag.snapshot_id == first.id and os.path.exists(f"{table.path}/tag/tag-v1")
    table.write_arrow(_rows("a", [2], 2.0))
    assert _read(table.to_arrow(tag="v1")) == [("a", 1, 1.0)]
    assert [(t.name, t.snapshot_id, t.time_retained_ms) for t in table.manage.tags()] == [("v1", 1, 3_600_000)]
    table.manage.rename_tag("v1", "release")
    assert not os.path.exists(f"{table.path}/tag/tag-v1") and os.path.exists(f"{table.path}/tag/tag-release")
    assert _read(table.to_arrow(tag="release")) == [("a", 1, 1.0)]
    table.manage.delete_tag("release")
    assert table.manage.tags() == [] and not os.path.exists(f"{table.path}/tag/tag-release")
    with pytest.raises(TagNotFoundError):
        table.to_arrow(tag="release")


def test_branches_through_the_namespace(catalog, table):
    table.write_arrow(_rows("a", [1], 1.0))
    table.manage.create_tag("v1")
    dev = table.manage.create_branch("dev", tag="v1")
    assert isinstance(dev, lakestore.Table) and dev.branch == "dev"
    assert table.manage.branches() == ["dev"]
    dev.write_arrow(_rows("a", [2], 2.0))
    assert _read(catalog.get_table("db.t$branch_dev").to_arrow()) == [("a", 1, 1.0), ("a", 2, 2.0)]
    assert _read(table.to_arrow()) == [("a", 1, 1.0)]
    table.manage.fast_forward("dev")
    assert _read(catalog.get_table("db.t").to_arrow()) == [("a", 1, 1.0), ("a", 2, 2.0)]
    table.manage.delete_branch("dev")
    assert table.manage.branches() == [] and not os.path.exists(f"{table.path}/branch/branch-dev")


def test_rollback_through_the_namespace(table):
    table.write_arrow(_rows("a", [1], 1.0))
    table.manage.create_tag("v1")
    table.write_arrow(_rows("a", [2], 2.0))
    table.write_arrow(_rows("a", [3], 3.0))
    assert table.manage.rollback_to(2).id == 2
    assert _read(table.to_arrow()) == [("a", 1, 1.0), ("a", 2, 2.0)]
    assert not os.path.exists(f"{table.path}/snapshot/snapshot-3")
    assert table.manage.rollback_to(tag="v1").id == 1
    assert _read(table.to_arrow()) == [("a", 1, 1.0)]


def test_consumers_through_the_namespace(table):
    table.write_arrow(_rows("a", [1], 1.0))
    table.write_arrow(_rows("a", [2], 2.0))
    assert table.manage.consumers() == {}
    table.manage.reset_consumer("mart", 2)
    assert table.manage.consumers() == {"mart": 2} and os.path.exists(f"{table.path}/consumer/consumer-mart")
    changes = table.stream(consumer_id="mart").poll()  # resumes at snapshot 2: only its row
    assert changes.column("id").to_pylist() == [2]
