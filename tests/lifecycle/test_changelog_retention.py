"""Changelog retention decoupled from snapshot retention: expired snapshots leave
``changelog/changelog-N`` and their changelog, readers replay changes from before the earliest
snapshot, and long-lived changelogs expire by their own retention without leaving files behind."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import SnapshotNotFoundError
from lakestore.meta.schema_change import SetOption

# a time after every snapshot of the test session: time retention never protects them
LATER_MS = int(time.time() * 1000) + 86_400_000

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])
FAR_FUTURE_MS = int(time.time() * 1000) + 10 * 86_400_000


def changelog_ids(table: lakestore.Table) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in (Path(table.path) / "changelog").glob("changelog-*"))


def no_orphans(table: lakestore.Table) -> bool:
    return table.maintenance.remove_orphan_files(older_than_ms=FAR_FUTURE_MS, dry_run=True).deleted == ()


@pytest.fixture
def catalog(tmp_path):
    c = lakestore.Catalog(str(tmp_path / "wh"))
    c.create_database("db")
    return c


def model_changes(commits: list[dict[int, int]]) -> list[tuple[int, int, str]]:
    """The lookup changelog of upserts: +I for a new key, -U/+U for a changed one."""
    state: dict[int, int] = {}
    out = []
    for commit in commits:
        for key, value in sorted(commit.items()):
            if key not in state:
                out.append((key, value, "+I"))
            elif state[key] != value:
                out += [(key, state[key], "-U"), (key, value, "+U")]
            state[key] = value
    return out


def as_tuples(changes: pa.Table) -> list[tuple[int, int, str]]:
    return sorted(zip(changes["id"].to_pylist(), changes["v"].to_pylist(), changes["_row_kind"].to_pylist(), strict=True))


def test_changelog_outlives_its_snapshots_and_then_expires(catalog):
    table = catalog.create_table(
        "db.t",
        schema=SCHEMA,
        primary_keys=["id"],
        options={
            "bucket": "1",
            "changelog-producer": "lookup",
            "write-only": "true",  # one snapshot per commit
            "changelog.num-retained.min": "5",
            "changelog.num-retained.max": "5",
        },
    )
    commits = [{i: c, i + 1: c} for c in range(1, 11) for i in [c % 3]]
    for number, commit in enumerate(commits[:6], start=1):
        table.write_arrow(pa.table({"id": list(commit), "v": list(commit.values())}, schema=SCHEMA))
        assert table.latest_snapshot().id == number
    result = table.maintenance.expire_snapshots(num_retained_min=2, num_retained_max=2, time_retained_ms=0, now_ms=LATER_MS)
    assert result.expired_snapshot_ids == (1, 2, 3, 4)
    # five ids back from the latest snapshot (2..6) keep their changelog: 5 and 6 as snapshots
    assert changelog_ids(table) == [2, 3, 4]
    assert result.expired_changelog_ids == (1,)
    assert [s.id for s in table.snapshots()] == [5, 6]
    first = len(model_changes(commits[:1]))
    assert as_tuples(table.read_changes(from_snapshot_id=1)) == sorted(model_changes(commits[:6])[first:])
    assert no_orphans(table)

    for commit in commits[6:]:
        table.write_arrow(pa.table({"id": list(commit), "v": list(commit.values())}, schema=SCHEMA))
    result = table.maintenance.expire_snapshots(num_retained_min=2, num_retained_max=2, time_retained_ms=0, now_ms=LATER_MS)
    # changelogs keep the last five snapshot ids (6..10): 9 and 10 are snapshots, 6..8 changelogs
    assert [s.id for s in table.snapshots()] == [9, 10]
    assert changelog_ids(table) == [6, 7, 8]
    assert result.expired_changelog_ids == (2, 3, 4, 5)
    assert as_tuples(table.read_changes(from_snapshot_id=5)) == sorted(model_changes(commits)[len(model_changes(commits[:5])) :])
    with pytest.raises(SnapshotNotFoundError):
        table.read_changes(from_snapshot_id=0)
    assert no_orphans(table)


def test_without_a_producer_the_appended_rows_are_kept_for_streaming(catalog):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "1", "changelog.num-retained.min": "10"})
    for value in range(1, 5):
        table.write_arrow(pa.table({"id": [1, 2], "v": [value, value]}, schema=SCHEMA))
    table.compact(full=True)  # the appended level-0 files are no longer live
    table.write_arrow(pa.table({"id": [3], "v": [9]}, schema=SCHEMA))
    table.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    assert [s.id for s in table.snapshots()] == [6]
    assert changelog_ids(table) == [1, 2, 3, 4, 5]
    changes = table.read_changes(from_snapshot_id=0)
    assert sorted(zip(changes["id"].to_pylist(), changes["v"].to_pylist(), strict=True)) == sorted(
        [(k, v) for v in range(1, 5) for k in (1, 2)] + [(3, 9)]
    )
    assert no_orphans(table)
    # once the changelog retention no longer keeps them, the appended files go too
    table = catalog.alter_table("db.t", [SetOption("changelog.num-retained.min", "1")])
    files_before = len(list(Path(table.path).rglob("*.parquet")))
    result = table.maintenance.expire_snapshots(num_retained_min=1, time_retained_ms=0, now_ms=LATER_MS)
    # as in Paimon, one round never expires the newest long-lived changelog
    assert result.expired_changelog_ids == (1, 2, 3, 4)
    assert changelog_ids(table) == [5]
    assert len(list(Path(table.path).rglob("*.parquet"))) < files_before
    assert sorted(table.to_arrow()["v"].to_pylist()) == [4, 4, 9]
    assert no_orphans(table)
