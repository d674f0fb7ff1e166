"""The FileStore under a Table: opened from the table's files, committing with the table's
post-commit maintenance as a hook, and the store lifecycle and compaction work on."""

from __future__ import annotations

import copy
import dataclasses

import pytest

import lakestore
from lakestore.compact import compact_table
from lakestore.errors import TableNotFoundError
from lakestore.lifecycle import expire_snapshots
from lakestore.store import FileStore
from tests.lifecycle.conftest import SCHEMA, batch, rows

RETAIN_ONE = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1 ms"}


def _messages(table: lakestore.Table, user: str, dt: str, ids: list[int], value: float) -> list:
    with table.new_write(commit_user=user) as write:
        write.write_arrow(batch(dt, ids, value))
        return write.prepare_commit()


def test_open_refuses_a_missing_table_or_branch(catalog, tmp_path):
    catalog.create_table("db.t", schema=SCHEMA)
    table = catalog.get_table("db.t")
    with pytest.raises(TableNotFoundError, match="no schema files"):
        FileStore.open(str(tmp_path / "nothing"), file_io=table.store.file_io)
    with pytest.raises(TableNotFoundError, match="branch 'dev'"):
        FileStore.open(table.path, file_io=table.store.file_io, branch="dev")
    store = FileStore.open(table.path + "/", file_io=table.store.file_io, identifier="db.t")
    assert (store.path, store.metadata_path, store.branch, store.schema.id) == (
        table.path,
        table.store.metadata_path,
        "main",
        table.schema.id,
    )


def test_a_store_commit_runs_the_tables_maintenance(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "1", **RETAIN_ONE})
    store = table.store
    for i in range(3):
        store.new_commit(commit_user="u").commit(_messages(table, "u", "a", [i], float(i)), commit_identifier=i)
    # the table's hook expired the older snapshots after each commit
    assert [s.id for s in table.snapshots()] == [3]
    assert store.latest_snapshot() == table.latest_snapshot() == store.snapshot(3)
    assert rows(table.to_arrow()) == [("a", 0, 0.0), ("a", 1, 1.0), ("a", 2, 2.0)]


def test_a_store_without_the_hook_commits_without_maintenance(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "1", **RETAIN_ONE})
    bare = dataclasses.replace(table.store, post_commit=None)
    for i in range(3):
        bare.new_commit(commit_user="u").commit(_messages(table, "u", "a", [i], float(i)), commit_identifier=i)
    assert [s.id for s in table.snapshots()] == [1, 2, 3]
    # lifecycle and compaction take the store
    assert expire_snapshots(bare).expired_snapshot_ids == (1, 2)
    (compacted,) = compact_table(bare, full=True)
    assert compacted.commit_kind == "COMPACT" and [s.id for s in table.snapshots()] == [3, 4]
    assert rows(table.to_arrow()) == [("a", 0, 0.0), ("a", 1, 1.0), ("a", 2, 2.0)]


def test_a_view_with_other_options_gets_its_own_store(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["dt", "id"], options={"bucket": "1"})
    view = copy.copy(table)
    view.schema = dataclasses.replace(table.schema, options={**table.schema.options, "write-only": "true"})
    assert view.options.write_only and not table.options.write_only and not table.store.options.write_only
    assert view.store is not table.store and view.store.manifests() is table.store.manifests()
    view.write_arrow(batch("a", [1], 1.0))
    assert rows(table.to_arrow()) == [("a", 1, 1.0)]
