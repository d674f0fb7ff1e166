"""The commit point and the work after a commit: every snapshot goes through the table's
``SnapshotCommit`` (lakestore/commit/snapshot_commit.py); commit callbacks run per table option
and per commit (``CommitProperties``); ``TableCommit.commit`` returns a ``CommitResult``."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

import pyarrow as pa
import pytest

import lakestore
from lakestore import CatalogSnapshotCommit, CommitCallback, CommitProperties, RenamingSnapshotCommit, Snapshot, SnapshotCommit
from lakestore.errors import OptionError
from lakestore.meta.options import CoreOptions
from lakestore.meta.snapshot import SnapshotManager

SCHEMA = pa.schema([("id", pa.int64())])
RETAIN_ONE = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}


def _table(tmp_path, name: str = "t", options: dict[str, str] | None = None) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db", exist_ok=True)
    return catalog.create_table(f"db.{name}", schema=SCHEMA, options=options or {})


def _rows(n: int) -> pa.Table:
    return pa.table({"id": list(range(n))})


def test_post_commit_hooks_off_for_one_commit_skips_expiration_until_the_next(tmp_path):
    table = _table(tmp_path, options=RETAIN_ONE)
    off = CommitProperties(post_commit_hooks=False)
    table.write_arrow(_rows(1), commit_properties=off)
    table.write_arrow(_rows(2), commit_properties=off)
    assert table.store.snapshot_manager.list_ids() == [1, 2]
    table.write_arrow(_rows(3))
    assert table.store.snapshot_manager.list_ids() == [3]
    assert table.to_arrow().num_rows == 6


def test_skip_callbacks_names_the_callbacks_one_commit_does_not_run(tmp_path):
    table = _table(tmp_path, options={**RETAIN_ONE, "tag.automatic-creation": "batch"})
    table.write_arrow(_rows(1), commit_properties=CommitProperties(skip_callbacks=frozenset({"snapshot-expiration"})))
    table.write_arrow(_rows(1), commit_properties=CommitProperties(skip_callbacks=frozenset({"snapshot-expiration"})))
    assert table.store.snapshot_manager.list_ids() == [1, 2]
    assert [t.snapshot_id for t in table.manage.tags()] == [2]  # the batch tag ran: only expiration was skipped
    table.write_arrow(_rows(1), commit_properties=CommitProperties(skip_callbacks=frozenset({"tag-creation"})))
    assert [t.snapshot_id for t in table.manage.tags()] == [2]  # not moved to snapshot 3
    assert table.store.snapshot_manager.list_ids() == [3]  # expiration ran this time


def test_commit_properties_are_typed():
    with pytest.raises(ValueError, match="skip_callbacks"):
        CommitProperties(skip_callbacks="snapshot-expiration")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="post_commit_hooks"):
        CommitProperties(post_commit_hooks="no")  # type: ignore[arg-type]
    assert CommitProperties(skip_callbacks={"a"}).skip_callbacks == frozenset({"a"})  # type: ignore[arg-type]
    assert not CommitProperties(post_commit_hooks=False).runs("tag-creation")


class Recording(CommitCallback):
    name = "recording"

    def __init__(self, enabled_by: str | None = None) -> None:
        self.calls: list[list[int]] = []
        self.enabled_by = enabled_by

    def enabled(self, options: CoreOptions) -> bool:
        return self.enabled_by is None or self.enabled_by in options.raw()

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        self.calls.append([s.id for s in snapshots])


class Failing(CommitCallback):
    name = "failing"

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        raise OptionError("broken callback")


def _commit_with(table: lakestore.Table, store, rows: int, properties: CommitProperties | None = None):
    with table.new_write(commit_user="u") as write:
        write.write_arrow(_rows(rows))
        messages = write.prepare_commit()
    return store.new_commit(commit_user="u").commit(messages, commit_properties=properties)


def test_a_failing_callback_is_logged_and_the_next_one_runs(tmp_path, caplog):
    table = _table(tmp_path)
    recording = Recording()
    store = dataclasses.replace(table.store, callbacks=(Failing(), recording))
    with caplog.at_level(logging.WARNING, logger="lakestore.commit.callbacks"):
        result = _commit_with(table, store, 2)
    assert [s.id for s in result] == [1]
    assert recording.calls == [[1]]
    assert "post-commit failing" in caplog.text and "broken callback" in caplog.text
    _commit_with(table, store, 1, CommitProperties(skip_callbacks=frozenset({"recording"})))
    assert recording.calls == [[1]]
    assert table.to_arrow().num_rows == 3


def test_a_callback_runs_only_where_the_table_enables_it(tmp_path):
    table = _table(tmp_path)
    recording = Recording(enabled_by="snapshot.time-retained")
    store = dataclasses.replace(table.store, callbacks=(recording,))
    _commit_with(table, store, 1)
    assert recording.calls == []
    schema = dataclasses.replace(store.schema, options={**store.schema.options, "snapshot.time-retained": "1 d"})
    _commit_with(table, dataclasses.replace(store, schema=schema), 1)
    assert recording.calls == [[2]]


def test_commit_result_says_which_snapshots_an_earlier_commit_landed(tmp_path):
    table = _table(tmp_path)
    with table.new_write(commit_user="job") as write:
        write.write_arrow(_rows(2))
        messages = write.prepare_commit()
    first = table.new_commit(commit_user="job").commit(messages, 7)
    assert [s.id for s in first] == [1] and first.recognised == frozenset() and not first.already_landed
    again = table.new_commit(commit_user="job").commit(messages, 7)
    assert [s.id for s in again] == [1] and again.recognised == {1} and again.already_landed
    assert again == first  # still the list of snapshots
    assert table.store.snapshot_manager.list_ids() == [1]


class LosingOnce(SnapshotCommit):
    """Loses the first publish (as if another commit had taken the id), then publishes."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.inner = RenamingSnapshotCommit()

    def commit(self, snapshots: SnapshotManager, snapshot: Snapshot) -> bool:
        self.calls.append(snapshot.id)
        return len(self.calls) > 1 and self.inner.commit(snapshots, snapshot)


def test_every_commit_publishes_through_the_tables_snapshot_commit(tmp_path):
    table = _table(tmp_path)
    chosen = LosingOnce()
    opened = lakestore.Table(table.path, file_io=table.store.file_io, snapshot_commit=chosen)
    assert opened.store.snapshot_commit is chosen
    opened.write_arrow(_rows(3))
    assert chosen.calls == [1, 1]  # lost once, retried on the same parent
    assert table.store.snapshot_manager.list_ids() == [1] and table.to_arrow().num_rows == 3
    manifests = {p.name for p in (tmp_path / "wh" / "db.db" / "t" / "manifest").iterdir()}
    assert len([m for m in manifests if m.startswith("manifest-list-")]) == 2  # the lost attempt's lists were deleted
    assert opened.on_branch("main").store.snapshot_commit is chosen


def test_a_catalog_snapshot_commit_sends_the_branch_and_the_parent(tmp_path):
    table = _table(tmp_path)
    table.write_arrow(_rows(1))
    table.manage.create_tag("t1", snapshot_id=1)
    table.manage.create_branch("b1", tag="t1")
    sent: list[tuple[str, int, str | None]] = []
    renaming = RenamingSnapshotCommit()

    def send(branch: str, snapshot: Snapshot, base_uuid: str | None) -> bool:
        sent.append((branch, snapshot.id, base_uuid))
        root = table.path if branch == "main" else f"{table.path}/branch/branch-{branch}"
        return renaming.commit(SnapshotManager(table.store.file_io, root), snapshot)

    commit = CatalogSnapshotCommit(send, table.path)
    lakestore.Table(table.path, file_io=table.store.file_io, snapshot_commit=commit).write_arrow(_rows(1))
    branch = lakestore.Table(table.path, file_io=table.store.file_io, branch="b1", snapshot_commit=commit)
    branch.write_arrow(_rows(2))
    first_uuid = table.store.snapshot_manager.get(1).uuid
    assert sent == [("main", 2, first_uuid), ("b1", 2, first_uuid)]
    assert branch.to_arrow().num_rows == 3 and table.to_arrow().num_rows == 2


def test_the_deprecated_post_commit_function_still_runs(tmp_path):
    table = _table(tmp_path)
    seen: list[int] = []
    with pytest.deprecated_call(match="callbacks"):
        store = lakestore.FileStore.open(
            table.path, file_io=table.store.file_io, post_commit=lambda snaps: seen.extend(s.id for s in snaps)
        )
    _commit_with(table, store, 1)
    assert seen == [1]
