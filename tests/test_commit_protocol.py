"""The one write/commit protocol (lakestore/commit/protocol.py): a failed commit that provably did
not land leaves no file of its write behind; one that may have landed keeps every file; a retry
with the same CommitId lands once."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import lakestore
from lakestore.commit.protocol import CommitId, write_and_commit

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
