"""Changelog producers both ways with Paimon Java: Java replays lakestore's changelog through
``incremental-between`` on ``$audit_log``; lakestore's ``read_changes`` replays Java's.

Compared one snapshot at a time: over a range of snapshots Java's batch incremental read merges
the versions of a key (it reads the range's files as one merge tree), a stream of changes does
not."""

from __future__ import annotations

import pyarrow as pa
import pytest

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
PRODUCERS = {
    "input": {"changelog-producer": "input"},
    "lookup": {"changelog-producer": "lookup"},
    "full-compaction": {"changelog-producer": "full-compaction", "full-compaction.delta-commits": "1"},
}
COMMITS = [
    {1: "a", 2: "a", 3: "a"},
    {2: "b", 4: "b"},
    {1: "c", 2: "b", 5: "c"},  # 2 unchanged: lookup and full-compaction emit nothing for it
]


def batch(commit: dict[int, str]) -> pa.Table:
    return pa.table({"id": list(commit), "v": list(commit.values())}, schema=SCHEMA)


Change = tuple[str, int, str]


def java_changes(java, warehouse, identifier: str, latest: int) -> list[list[Change]]:
    """Per snapshot, the changes Java reads (sorted)."""
    out = []
    for snapshot_id in range(1, latest + 1):
        rows = java.changes(warehouse, identifier, snapshot_id - 1, snapshot_id)
        out.append(sorted(zip(rows["rowkind"].to_pylist(), rows["id"].to_pylist(), rows["v"].to_pylist(), strict=True)))
    return out


def lakestore_changes(table) -> list[list[Change]]:
    out = []
    for snapshot_id in range(1, table.latest_snapshot().id + 1):
        rows = table.read_changes(from_snapshot_id=snapshot_id - 1, to_snapshot_id=snapshot_id)
        out.append(sorted(zip(rows["_row_kind"].to_pylist(), rows["id"].to_pylist(), rows["v"].to_pylist(), strict=True)))
    return out


@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_java_replays_the_changelog_lakestore_wrote(java, catalog, warehouse, producer):
    table = catalog.create_table("db.t", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2", **PRODUCERS[producer]})
    for commit in COMMITS:
        table.write_arrow(batch(commit))
    latest = table.latest_snapshot().id
    expected = lakestore_changes(table)
    assert any(expected), "the producer wrote no changelog"
    assert java_changes(java, warehouse, "db.t", latest) == expected


@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_lakestore_replays_the_changelog_java_wrote(java, catalog, warehouse, producer):
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2", **PRODUCERS[producer]})
    for commit in COMMITS:
        java.write(warehouse, "db.t", batch(commit))
        if producer == "full-compaction":
            java.compact(warehouse, "db.t")  # Java's batch writes do not count delta commits
    table = catalog.get_table("db.t")
    latest = table.latest_snapshot().id
    expected = java_changes(java, warehouse, "db.t", latest)
    assert any(expected), "Paimon Java wrote no changelog"
    assert lakestore_changes(table) == expected


@pytest.mark.parametrize("row_deduplicate", [False, True])
@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_both_engines_produce_the_same_changes(java, catalog, warehouse, producer, row_deduplicate):
    """The same commits give the same changes from either engine's producer (over the whole
    history: the engines cut snapshots differently). Key 2 rewritten unchanged: -U/+U unless
    changelog-producer.row-deduplicate (lakestore's full-compaction producer always deduplicated)."""
    opts = {"bucket": "2", **PRODUCERS[producer], "changelog-producer.row-deduplicate": str(row_deduplicate).lower()}
    table = catalog.create_table("db.ours", schema=SCHEMA, primary_keys=["id"], options=opts)
    java.create_table(warehouse, "db.ref", SCHEMA, primary_keys=["id"], options=opts)
    for commit in COMMITS:
        table.write_arrow(batch(commit))
        java.write(warehouse, "db.ref", batch(commit))
        if producer == "full-compaction":
            java.compact(warehouse, "db.ref")
    ours = sorted(c for s in lakestore_changes(catalog.get_table("db.ours")) for c in s)
    theirs = sorted(c for s in java_changes(java, warehouse, "db.ref", catalog.get_table("db.ref").latest_snapshot().id) for c in s)
    assert ours == theirs
    if producer != "input":  # 2 -> b, then b again
        assert ours.count(("+U", 2, "b")) == (1 if row_deduplicate else 2)
