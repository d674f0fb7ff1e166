"""Post-commit maintenance (automatic tags, expiration) runs in the commit, whichever path made it,
and never turns a landed commit into a failure; partition specs are checked by one rule."""

from __future__ import annotations

import logging

import pytest

from lakestore.commit.commit import TableCommit
from lakestore.errors import OptionError, PartitionValueError
from tests.lifecycle.conftest import SCHEMA, batch, rows

RETAIN_TWO = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"}


def _table(catalog, **options):
    return catalog.create_table("db.t", schema=SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "1", **options})


def _commit_via_new_commit(table, data, user="u"):
    write = table.new_write(commit_user=user)
    write.write_arrow(data)
    return table.new_commit(commit_user=user).commit(write.prepare_commit())


def test_new_commit_runs_expiration(catalog):
    t = _table(catalog, **RETAIN_TWO)
    for i in range(4):
        _commit_via_new_commit(t, batch("a", [i], float(i)))
    assert t.store.snapshot_manager.list_ids() == [3, 4]
    assert len(rows(t.to_arrow())) == 4


def test_compact_and_write_arrow_run_it_once_per_commit(catalog):
    t = _table(catalog, **RETAIN_TWO)
    for i in range(3):
        t.write_arrow(batch("a", [i], float(i)))
    assert t.store.snapshot_manager.list_ids() == [2, 3]
    assert len(t.compact(full=True)) == 1
    assert t.store.snapshot_manager.list_ids() == [3, 4]


def test_automatic_tags_from_new_commit(catalog):
    t = _table(catalog, **{"tag.automatic-creation": "process-time", "tag.creation-period": "daily"})
    _commit_via_new_commit(t, batch("a", [1], 1.0))  # tags the period that ended before this commit
    assert [tag.snapshot_id for tag in t.manage.tags()] == [1]


def test_maintenance_failure_is_logged_not_raised(catalog, caplog):
    t = _table(catalog)

    def failing(snapshots):
        raise OptionError("maintenance broke")

    write = t.new_write(commit_user="u")
    write.write_arrow(batch("a", [1, 2], 1.0))
    commit = TableCommit(t.store.file_io, t.path, t.schema, commit_user="u", post_commit=failing)
    with caplog.at_level(logging.WARNING, logger="lakestore.commit.commit"):
        landed = commit.commit(write.prepare_commit())
    assert [s.id for s in landed] == [1]
    assert len(rows(t.to_arrow())) == 2
    assert "maintenance broke" in caplog.text and "snapshot 1 landed" in caplog.text


def test_post_commit_not_run_when_nothing_landed(catalog):
    t = _table(catalog)
    calls = []
    commit = TableCommit(t.store.file_io, t.path, t.schema, commit_user="u", post_commit=calls.append)
    assert commit.commit([]) == []
    assert calls == []


@pytest.mark.parametrize("partitions", [[{"bogus": "a"}], {"bogus": "a"}, [{"dt": "a"}, {"dt": "a", "id": 1}], ["dt=a"]])
def test_compact_refuses_unknown_partition_keys(catalog, partitions):
    t = _table(catalog)
    t.write_arrow(batch("a", [1], 1.0))
    t.write_arrow(batch("a", [1], 2.0))
    with pytest.raises(PartitionValueError):
        t.compact(full=True, partitions=partitions)
    assert t.latest_snapshot().id == 2


def test_overwrite_and_drop_refuse_unknown_partition_keys(catalog):
    t = _table(catalog)
    t.write_arrow(batch("a", [1], 1.0))
    with pytest.raises(PartitionValueError, match="not partition keys"):
        t.write_arrow(batch("a", [1], 1.0), overwrite={"bogus": "a"})
    with pytest.raises(PartitionValueError, match="not partition keys"):
        t.drop_partitions([{"bogus": "a"}])
    assert t.latest_snapshot().id == 1
