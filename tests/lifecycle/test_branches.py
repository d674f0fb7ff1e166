"""Branches: created from a tag (or empty), written, compacted and expired on their own, read as
``db.t$branch_<name>``, fast-forwarded into main and deleted; maintenance on any branch keeps what
every branch references."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import BranchError, InvalidIdentifierError, TagNotFoundError
from lakestore.meta.schema_change import AddColumn

# a time after every snapshot of the test session: time retention never protects them
LATER_MS = int(time.time() * 1000) + 86_400_000

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
FAR_FUTURE_MS = int(time.time() * 1000) + 10 * 86_400_000


def rows(ids, tag):
    return pa.table({"id": list(ids), "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


def values(table: lakestore.Table, **kwargs) -> list[str]:
    return sorted(table.to_arrow(**kwargs)["v"].to_pylist())


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


@pytest.fixture
def table(catalog):
    t = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(rows([1, 2, 3], "a"))
    t.manage.create_tag("v1")
    t.write_arrow(rows([3, 4], "b"))
    return t


def test_a_branch_from_a_tag_evolves_apart_from_main(catalog, table):
    dev = table.manage.create_branch("dev", tag="v1")
    assert table.manage.branches() == ["dev"]
    assert values(dev) == ["a1", "a2", "a3"]
    dev.write_arrow(rows([1, 9], "d"))
    assert values(catalog.get_table("db.t$branch_dev")) == ["a2", "a3", "d1", "d9"]
    assert values(table) == ["a1", "a2", "b3", "b4"]
    # ids continue from the tagged snapshot, independently of main's
    assert [s.id for s in dev.snapshots()] == [1, 2]
    assert dev.snapshot(2).commit_user != table.snapshot(2).commit_user
    # the branch's data files live in the table's buckets, next to main's
    assert not list((Path(table.path) / "branch").rglob("*.parquet"))


def test_branch_schema_evolution_and_maintenance_stay_on_the_branch(catalog, table):
    table.manage.create_branch("dev", tag="v1")
    dev = catalog.alter_table("db.t$branch_dev", [AddColumn("extra", "INT")])
    dev.write_arrow(pa.table({"id": [5], "v": ["d5"], "extra": [7]}))
    dev.write_arrow(pa.table({"id": [5], "v": ["d5b"], "extra": [8]}))
    dev.compact(full=True)
    assert dev.latest_snapshot().commit_kind == "COMPACT"
    dev.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    assert dev.to_arrow().column_names == ["id", "v", "extra"]
    assert values(dev) == ["a1", "a2", "a3", "d5b"]
    main = catalog.get_table("db.t")
    assert main.schema.field_names == ["id", "v"]
    assert values(main) == ["a1", "a2", "b3", "b4"]
    assert [s.id for s in main.snapshots()] == [1, 2]


def test_maintenance_on_main_keeps_what_branches_reference(catalog, table):
    dev = table.manage.create_branch("dev", tag="v1")
    dev.write_arrow(rows([7], "d"))
    table.manage.delete_tag("v1")
    table.write_arrow(rows([1, 2, 3, 4], "c"), overwrite=True)
    table.write_arrow(rows([5], "c"))
    table.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS)
    assert values(table) == ["c1", "c2", "c3", "c4", "c5"]
    assert values(catalog.get_table("db.t$branch_dev")) == ["a1", "a2", "a3", "d7"]
    # orphan cleanup started from the branch sees the same references
    dev.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS)
    assert values(catalog.get_table("db.t$branch_dev")) == ["a1", "a2", "a3", "d7"]
    assert values(table) == ["c1", "c2", "c3", "c4", "c5"]


def test_deleting_a_branch_lets_orphan_cleanup_reclaim_its_files(catalog, table):
    dev = table.manage.create_branch("dev", tag="v1")
    dev.write_arrow(rows([8], "d"))
    before = {p.name for p in Path(table.path).rglob("*.parquet")}
    table.manage.delete_branch("dev")
    assert table.manage.branches() == []
    result = table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS)
    after = {p.name for p in Path(table.path).rglob("*.parquet")}
    assert len(after) < len(before) and any(p.endswith(".parquet") for p in result.deleted)
    assert values(table) == ["a1", "a2", "b3", "b4"]
    assert values(table, tag="v1") == ["a1", "a2", "a3"]
    with pytest.raises(lakestore.TableNotFoundError):
        catalog.get_table("db.t$branch_dev")


def test_fast_forward_makes_main_the_branch(catalog, table):
    table.manage.create_tag("v2")
    dev = table.manage.create_branch("dev", tag="v1")
    dev.write_arrow(rows([6], "d"))
    table.manage.fast_forward("dev")
    main = catalog.get_table("db.t")
    assert values(main) == ["a1", "a2", "a3", "d6"]
    assert [s.id for s in main.snapshots()] == [1, 2]
    assert [t.name for t in main.manage.tags()] == ["v1"]  # v2 pointed at a dropped snapshot
    main.write_arrow(rows([7], "m"))
    assert values(main) == ["a1", "a2", "a3", "d6", "m7"]
    assert main.latest_snapshot().id == 3


def test_an_empty_branch_starts_with_the_current_schema(catalog, table):
    empty = table.manage.create_branch("scratch")
    assert empty.to_arrow().num_rows == 0 and empty.latest_snapshot() is None
    empty.write_arrow(rows([1], "s"))
    assert values(empty) == ["s1"]
    assert values(table) == ["a1", "a2", "b3", "b4"]


@pytest.mark.parametrize("name", ["main", "123", "", "a/b", "x y"])
def test_invalid_branch_names_are_refused(table, name):
    with pytest.raises(InvalidIdentifierError):
        table.manage.create_branch(name)


def test_branch_errors_are_typed_and_change_nothing(table):
    table.manage.create_branch("dev", tag="v1")
    with pytest.raises(BranchError, match="already exists"):
        table.manage.create_branch("dev")
    with pytest.raises(TagNotFoundError):
        table.manage.create_branch("other", tag="nope")
    assert table.manage.branches() == ["dev"]
    with pytest.raises(BranchError, match="does not exist"):
        table.manage.fast_forward("nope")
    with pytest.raises(BranchError, match="does not exist"):
        table.manage.delete_branch("nope")
    with pytest.raises(BranchError, match="main branch"):
        table.on_branch("dev").manage.create_branch("x")
