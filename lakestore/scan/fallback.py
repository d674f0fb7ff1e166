"""Reads over two branches, as Paimon's ``FallbackReadFileStoreTable``: ``scan.fallback-branch``
(a partition missing here is read from that branch) and ``scan.primary-branch`` (a partition there
is read from there, the others from here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lakestore.errors import SnapshotNotFoundError
from lakestore.meta.branch import MAIN_BRANCH, branch_names, branch_root
from lakestore.meta.file_scan import live_entries
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.planner import ScanPlanner, Split
from lakestore.read.predicate import Predicate
from lakestore.read.split_read import SplitReader
from lakestore.scan.time_travel import resolve, snapshot_at
from lakestore.store import FileStore


@dataclass(frozen=True)
class BranchPart:
    """Splits of one branch in a read over two branches: read with ``reader`` (the branch's
    schemas), its columns ``columns`` (the read's columns, by position)."""

    reader: SplitReader
    columns: list[str]
    splits: list[Split]


def other_branch(table: FileStore) -> tuple[FileStore, bool] | None:
    """The branch a batch read of ``table`` also reads, and whether ``table``'s own partitions win
    (``scan.fallback-branch``: a partition missing here is read from that branch) or the other's
    (``scan.primary-branch``: a partition there is read from there, the others from here).
    None when neither is set, or the branch has no schema (Paimon then logs and reads one branch)."""
    options = table.schema.options
    for key, wrapped_first in (("scan.fallback-branch", True), ("scan.primary-branch", False)):
        name = str(options.get(key) or "").strip()
        if name:
            if name != MAIN_BRANCH and name not in branch_names(table.file_io, table.path):
                return None
            if SchemaManager(table.file_io, branch_root(table.path, name)).latest() is None:
                return None
            return FileStore.open(
                table.path, file_io=table.file_io, identifier=table.identifier, branch=name, snapshot_commit=table.snapshot_commit
            ), wrapped_first
    return None


def _other_snapshot(table: FileStore, other: FileStore, travel: Mapping[str, Any]) -> Snapshot | None:
    """The snapshot of ``other`` a read of ``table`` with time travel ``travel`` sees, as Paimon's
    ``rewriteOtherOptions``: a snapshot id becomes the other branch's last snapshot committed by
    that snapshot's time (its first snapshot when none was); tags, timestamps and watermarks are
    looked up in the other branch."""
    if travel.get("snapshot_id") is not None:
        millis = table.snapshot_manager.get(int(travel["snapshot_id"])).time_millis
        try:
            return snapshot_at(other, millis)
        except SnapshotNotFoundError:
            return other.snapshot_manager.get(1)
    return resolve(other, **travel)


def _partitions(table: FileStore, snapshot: Snapshot | None) -> set[bytes]:
    return {e.partition for e in live_entries(table.manifests(), snapshot)}


def two_branch_parts(
    table: FileStore,
    snapshot: Snapshot | None,
    schema: TableSchema,
    columns: Sequence[str],
    predicate: Predicate | None,
    travel: Mapping[str, Any],
) -> list[BranchPart] | None:
    """The splits of a batch read of ``table`` over it and its fallback (or primary) branch, as
    Paimon 2.0's ``FallbackReadScan.plan``: the partitions the first branch holds are read from
    it, the other branch's remaining partitions from the other. None: one branch only."""
    found = other_branch(table)
    if found is None:
        return None
    other, wrapped_first = found
    other_snapshot = _other_snapshot(table, other, travel)
    other_schema = other.schema_at(other_snapshot) if travel else other.schema
    mine, theirs = schema.arrow_schema(), other_schema.arrow_schema()
    if [f.type for f in mine] != [f.type for f in theirs]:
        raise ValueError(
            f"branches {table.branch} and {other.branch} of {table.path} do not have the same row type"
            f" ({'scan.fallback-branch' if wrapped_first else 'scan.primary-branch'} is {other.branch!r}):"
            f" {mine} vs {theirs}"
        )
    positions = [schema.field_names.index(c) for c in columns]
    other_columns = [other_schema.field_names[i] for i in positions]
    other_predicate = predicate
    if predicate is not None and schema.field_names != other_schema.field_names:
        raise ValueError(f"a filtered read over branches {table.branch} and {other.branch} needs the same column names")
    own = BranchPart(table.split_reader(schema), list(columns), [])
    theirs_part = BranchPart(other.split_reader(other_schema), other_columns, [])
    first, second = (own, theirs_part) if wrapped_first else (theirs_part, own)
    first_snapshot, second_snapshot = (snapshot, other_snapshot) if wrapped_first else (other_snapshot, snapshot)
    first_schema, second_schema = (schema, other_schema) if wrapped_first else (other_schema, schema)
    first_table, second_table = (table, other) if wrapped_first else (other, table)
    complete = _partitions(first_table, first_snapshot)
    first.splits.extend(ScanPlanner(first_schema, first_table.manifests()).plan(first_snapshot, predicate))
    remaining = _partitions(second_table, second_snapshot) - complete
    if remaining:
        splits = ScanPlanner(second_schema, second_table.manifests()).plan(second_snapshot, other_predicate)
        second.splits.extend(s for s in splits if s.partition in remaining)
    return [first, second]
