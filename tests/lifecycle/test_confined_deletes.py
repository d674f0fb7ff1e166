"""Deletion never leaves the table: every deleting operation fed hostile metadata (manifest
entries with ``..`` names, absolute or undeclared external paths, extra files, bucket
directories linked out of the table) refuses with ``PathOutsideTableError`` before it deletes
anything, and no file anywhere (inside the warehouse or outside it) changed."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.commit.commit import TableCommit
from lakestore.errors import PathOutsideTableError
from lakestore.lifecycle.changelog_expire import Retention, expire_changelogs
from lakestore.lifecycle.expire import expire_snapshots
from lakestore.lifecycle.orphans import remove_orphan_files
from lakestore.lifecycle.rollback import rollback_to
from lakestore.lifecycle.tags import TagManager
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.confine import TableFolders, delete_confined, resolve
from tests.lifecycle.hostile import KINDS, craft_snapshot, hostile_entry, publish, tree_state, victim

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
DAY_MS = 86_400_000


def _table(tmp: Path) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp / "wh"))
    catalog.create_database("db", exist_ok=True)
    # a declared external root (unused by writes: strategy none) that the hostile paths are not under
    options = {"data-file.external-paths": f"file:{tmp / 'ext'}"}
    table = catalog.create_table("db.t", schema=SCHEMA, options=options)
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    return table


def _hostile(tmp: Path, kind: str) -> lakestore.Table:
    """Snapshot 1 written by lakestore, snapshot 2 (published by a writer bypassing every check)
    adds an entry naming ``<tmp>/outside/victim.parquet``."""
    table = _table(tmp)
    publish(table, craft_snapshot(table, [hostile_entry(table, kind, tmp)]))
    return table


def _refused(tmp: Path, operation) -> None:
    before = tree_state(tmp)
    with pytest.raises(PathOutsideTableError):
        operation()
    assert tree_state(tmp) == before
    assert (tmp / "outside" / "victim.parquet").read_bytes() == b"not the table's"


@pytest.mark.parametrize("kind", KINDS)
def test_rollback_refuses_hostile_metadata(tmp_path, kind):
    table = _hostile(tmp_path, kind)
    _refused(tmp_path, lambda: rollback_to(table.store, snapshot_id=1))


@pytest.mark.parametrize("kind", KINDS)
def test_snapshot_expiration_refuses_hostile_metadata(tmp_path, kind):
    table = _hostile(tmp_path, kind)
    table.write_arrow(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA))  # snapshot 3 stays
    expire = lambda: expire_snapshots(table.store, num_retained_min=1, num_retained_max=1, time_retained_ms=0)  # noqa: E731
    _refused(tmp_path, expire)
    assert [s.id for s in table.snapshots()] == [1, 2, 3]


@pytest.mark.parametrize("kind", KINDS)
def test_tag_deletion_refuses_hostile_metadata(tmp_path, kind):
    table = _hostile(tmp_path, kind)
    TagManager(table.store).create("h", 2)
    table.write_arrow(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA))
    (Path(table.path) / "snapshot" / "snapshot-2").unlink()  # expired: the tag alone keeps its files
    _refused(tmp_path, lambda: TagManager(table.store).delete("h"))


@pytest.mark.parametrize("kind", KINDS)
def test_changelog_expiration_refuses_hostile_metadata(tmp_path, kind):
    table = _hostile(tmp_path, kind)
    manager = table.store.snapshot_manager
    hostile = manager.get(2)
    manager.publish_changelog(hostile.__class__(**{**hostile.__dict__, "id": 1}))  # changelog-1: the hostile delta
    manager.publish_changelog(hostile)
    table.write_arrow(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA))
    expire = lambda: expire_changelogs(table.store, Retention(min=1, max=1, time_ms=0), limit=10, now_ms=2**62)  # noqa: E731
    _refused(tmp_path, expire)


@pytest.mark.parametrize("kind", KINDS)
def test_partition_drop_then_expiration_refuses_hostile_metadata(tmp_path, kind):
    """An OVERWRITE that drops everything (what partition expiration commits) turns the hostile
    entry into a removed file; expiring it is refused."""
    table = _hostile(tmp_path, kind)
    table.write_arrow(pa.table({"id": [9], "v": ["z"]}, schema=SCHEMA), overwrite=True)
    expire = lambda: expire_snapshots(table.store, num_retained_min=1, num_retained_max=1, time_retained_ms=0)  # noqa: E731
    _refused(tmp_path, expire)


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "external"])
def test_aborted_commit_refuses_messages_naming_outside_files(tmp_path, kind):
    table = _table(tmp_path)
    entry = hostile_entry(table, kind, tmp_path)
    commit = TableCommit(table.store.file_io, table.path, table.schema, commit_user="u", manifests=table.store.manifest_store)
    message = CommitMessage(entry.partition, entry.bucket, entry.total_buckets, new_files=(entry.file,))
    _refused(tmp_path, lambda: commit.abort([message]))


def test_orphan_cleanup_does_not_follow_links_out_of_the_table(tmp_path):
    table = _table(tmp_path)
    target = victim(tmp_path)
    (Path(table.path) / "bucket-9").symlink_to(target.parent, target_is_directory=True)
    (Path(table.path) / "bucket-0" / "outside-link.parquet").symlink_to(target)
    before = tree_state(tmp_path)
    result = remove_orphan_files(table.store, older_than_ms=int(time.time() * 1000) + DAY_MS)
    assert target.read_bytes() == b"not the table's"
    assert result.deleted == ("bucket-0/outside-link.parquet",)  # the link itself, not its target
    changed = {k for k in before.keys() | tree_state(tmp_path).keys() if before.get(k) != tree_state(tmp_path).get(k)}
    assert changed == {"wh/db.db/t/bucket-0/outside-link.parquet"}


def test_branch_deletion_refuses_a_branch_linked_out_of_the_table(tmp_path):
    table = _table(tmp_path)
    table.manage.create_branch("b")
    target = victim(tmp_path)
    branch = Path(table.path) / "branch" / "branch-b"
    (target.parent / "schema").mkdir()
    for f in (branch / "schema").iterdir():
        (target.parent / "schema" / f.name).write_bytes(f.read_bytes())
    for f in (branch / "schema").iterdir():
        f.unlink()
    (branch / "schema").rmdir()
    branch.rmdir()
    branch.symlink_to(target.parent, target_is_directory=True)
    _refused(tmp_path, lambda: table.manage.delete_branch("b"))


def test_drop_table_leaves_files_behind_links(tmp_path):
    table = _table(tmp_path)
    target = victim(tmp_path)
    (Path(table.path) / "bucket-9").symlink_to(target.parent, target_is_directory=True)
    lakestore.Catalog(str(tmp_path / "wh")).drop_table("db.t")
    assert not Path(table.path).exists()
    assert target.read_bytes() == b"not the table's"


def test_delete_confined_checks_the_whole_batch_first(tmp_path):
    table = _table(tmp_path)
    inside = Path(table.path) / "bucket-0" / "junk.parquet"
    inside.write_bytes(b"x")
    target = victim(tmp_path)
    folders = TableFolders.of(table.path, table.schema.options)
    with pytest.raises(PathOutsideTableError) as err:
        delete_confined(
            table.store.file_io, folders, [("data", [str(inside), f"{table.path}/bucket-0/{'../' * 4}outside/victim.parquet"])], source="t"
        )
    assert inside.exists() and target.exists()
    assert len(err.value.paths) == 1
    # the metadata folders are no place for a data file, and an external root is
    assert folders.outside([f"{table.path}/schema/schema-0", f"{table.path}/snapshot/snapshot-1"])
    assert not folders.outside([f"file:{tmp_path / 'ext'}/bucket-0/x.parquet", str(inside)])
    assert resolve("s3://b/wh/t/../../x") == "s3://b/x"
