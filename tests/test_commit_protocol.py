"""The one write/commit protocol (lakestore/commit/protocol.py): a failed commit that provably did
not land leaves no file of its write behind; one that may have landed keeps every file; a retry
with the same CommitId lands once."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.commit.protocol import CommitId, abort_unless_landed, commit_messages, find_landed, write_and_commit

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


class Boom(Exception):
    pass


class HookedTable:
    """A table whose commits run ``hook`` (raising at one point of the commit)."""

    def __init__(self, table: lakestore.Table, point: str) -> None:
        self.table, self.point = table, point

    def new_write(self, **kwargs):
        return self.table.new_write(**kwargs)

    def new_commit(self, *, commit_user, hook=None):
        def fail(point: str) -> None:
            if point == self.point:
                raise Boom(point)

        return self.table.new_commit(commit_user=commit_user, hook=fail)


def data_files(table: lakestore.Table) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(table.path) for f in fs if f.startswith("data-")}


@pytest.fixture
def table(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    return catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1"})


def test_a_commit_that_did_not_land_leaves_nothing(table):
    with pytest.raises(Boom):
        write_and_commit(HookedTable(table, "before-publish"), lambda w: w.write_arrow(pa.table({"id": [1], "v": ["a"]})), CommitId("u"))
    assert table.latest_snapshot() is None and data_files(table) == set()


def test_a_commit_that_may_have_landed_keeps_its_files_and_a_retry_lands_once(table):
    rows = pa.table({"id": [1, 2], "v": ["a", "b"]})
    with pytest.raises(Boom):
        write_and_commit(HookedTable(table, "after-publish"), lambda w: w.write_arrow(rows), CommitId("u", 7))
    landed = table.latest_snapshot()
    assert landed is not None and landed.commit_identifier == 7
    files = data_files(table)
    assert files and table.to_arrow().num_rows == 2  # the landed snapshot's files stayed
    again = write_and_commit(table, lambda w: w.write_arrow(rows), CommitId("u", 7))
    assert again is not None and again.id == landed.id  # recognised, not committed twice
    assert [s.id for s in table.snapshots()] == [landed.id]
    assert data_files(table) == files  # the retry's own files were not left behind


def test_commit_ids_are_typed():
    with pytest.raises(ValueError):
        CommitId("")
    with pytest.raises(ValueError):
        CommitId("u", "7")  # type: ignore[arg-type]
    assert CommitId("u") == CommitId("u", lakestore.BATCH_COMMIT_IDENTIFIER)


def _messages(table: lakestore.Table, user: str, ids: list[int]) -> list[lakestore.CommitMessage]:
    """Messages of a write made elsewhere (as a Spark task's), serialized and back."""
    with table.new_write(commit_user=user) as write:
        write.write_arrow(pa.table({"id": ids, "v": [str(i) for i in ids]}))
        messages = write.prepare_commit()
    return [lakestore.CommitMessage.from_bytes(m.to_bytes()) for m in messages]


def test_find_landed_scopes_the_batch_identifier_to_the_write(table):
    before = table.store.snapshot_manager.latest_id()
    batch = commit_messages(table, _messages(table, "u", [1]), CommitId("u"))
    assert batch is not None
    assert find_landed(table, CommitId("u"), "APPEND", after_id=before) == batch
    assert find_landed(table, CommitId("u"), "APPEND", after_id=batch.id) is None  # a later batch commit of u is another commit
    explicit = commit_messages(table, _messages(table, "u", [2]), CommitId("u", 3))
    assert explicit is not None
    assert find_landed(table, CommitId("u", 3), "APPEND", after_id=explicit.id) == explicit  # an explicit identifier is one commit
    assert find_landed(table, CommitId("u", 3), "OVERWRITE", after_id=None) is None


def test_committing_messages_of_other_processes(table):
    def refuse() -> None:
        raise Boom("two tasks wrote one bucket")

    with pytest.raises(Boom):
        commit_messages(table, _messages(table, "u", [1, 2]), CommitId("u", 1), check=refuse)
    assert table.latest_snapshot() is None and data_files(table) == set()  # refused before any attempt: deleted

    with pytest.raises(Boom):
        commit_messages(HookedTable(table, "before-publish"), _messages(table, "u", [1, 2]), CommitId("u", 1))
    assert table.latest_snapshot() is None and data_files(table) == set()  # provably not landed: deleted

    with pytest.raises(Boom):
        commit_messages(HookedTable(table, "after-publish"), _messages(table, "u", [1, 2]), CommitId("u", 1))
    landed = table.latest_snapshot()
    files = data_files(table)
    assert landed is not None and files and table.to_arrow().num_rows == 2  # may have landed: kept

    rerun = _messages(table, "u", [1, 2])
    assert data_files(table) > files
    again = commit_messages(table, rerun, CommitId("u", 1))
    assert again == landed and [s.id for s in table.snapshots()] == [landed.id]
    assert data_files(table) == files  # the rerun's unused files were deleted


def test_an_abort_from_another_process_keeps_the_files_of_a_landed_commit(table):
    messages = _messages(table, "u", [1, 2])
    start = table.store.snapshot_manager.latest_id()
    assert commit_messages(table, messages, CommitId("u")) is not None
    files = data_files(table)
    assert not abort_unless_landed(table, CommitId("u"), "APPEND", messages, after_id=start)
    assert data_files(table) == files and table.to_arrow().num_rows == 2

    unlanded = _messages(table, "u", [3])
    assert data_files(table) > files
    assert abort_unless_landed(table, CommitId("u", 9), "APPEND", unlanded, after_id=table.store.snapshot_manager.latest_id())
    assert data_files(table) == files and table.to_arrow().num_rows == 2


@pytest.mark.parametrize("postpone", [False, True], ids=["buckets", "postpone"])
@pytest.mark.parametrize(("point", "kept"), [("after-manifests", False), ("after-publish", True)])
def test_a_failed_compaction_commit_follows_the_protocol(tmp_path, monkeypatch, postpone, point, kept):
    """Compaction commits through the protocol: outputs are deleted when the commit provably did
    not land (it failed before its publish), kept when it may have landed (after the publish)."""
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "-2" if postpone else "1"})
    for start in (0, 10):
        table.write_arrow(pa.table({"id": list(range(start, start + 10)), "v": ["x"] * 10}, schema=SCHEMA))
    before = data_files(table)
    original = lakestore.store.FileStore.new_commit

    def failing(self, *, commit_user, hook=None):
        def fail(step: str) -> None:
            if step == point:
                raise Boom(step)

        return original(self, commit_user=commit_user, hook=fail)

    monkeypatch.setattr(lakestore.store.FileStore, "new_commit", failing)
    with pytest.raises(Boom):
        table.maintenance.compact(full=True)
    monkeypatch.undo()
    written = data_files(table) - before
    if kept:
        assert written and table.store.snapshot_manager.latest().commit_kind == "COMPACT"  # it landed: its files stay
    else:
        assert written == set() and table.store.snapshot_manager.latest_id() == 2  # provably not landed: nothing left
    # postponed rows are read once a compaction lands (Paimon's postpone buckets)
    visible = list(range(20)) if kept or not postpone else []
    assert sorted(table.to_arrow().column("id").to_pylist()) == visible
