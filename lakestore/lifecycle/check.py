"""Table check: commits that wrote their files but are referenced by no snapshot.

A commit writes data files, manifests and manifest lists, then publishes ``snapshot-N``. When
the publish loses a race the committer deletes what it wrote (lakestore) or leaves it for orphan
cleanup (Paimon). One case leaves a commit that its writer believes landed: on a local file
system, Paimon Java's publish checks that ``snapshot-N`` is absent and then renames over it,
so a snapshot another engine published in between is replaced. Its manifest list then exists,
no snapshot references it, and the rows it added are in no snapshot. ``check_table`` finds such
manifest lists and the data files they add that are still on disk and referenced nowhere: the
rows of a lost (or crashed, or still running) commit. It also validates every retained snapshot
as the REST catalog's commit endpoint validates a new one (``lakestore.commit.validate``): paths
outside the table, missing files, unknown schema ids, fields outside Paimon's ranges. It changes
nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakestore.commit.validate import SnapshotValidator, ValidatedManifests
from lakestore.errors import CorruptMetadataError, InvalidCommitError, SnapshotNotFoundError
from lakestore.io.factory import io_for
from lakestore.lifecycle.files import TableFiles
from lakestore.lifecycle.tags import retained_references
from lakestore.meta.manifest import ADD

if TYPE_CHECKING:
    from lakestore.store import FileStore

_LIST_PREFIX = "manifest-list-"


@dataclass(frozen=True, slots=True)
class UnreferencedCommit:
    """An unreferenced manifest list and what it adds that no retained snapshot references."""

    manifest_list: str
    data_files: tuple[str, ...]  # existing data files, referenced by no snapshot, tag or branch
    row_count: int
    modified_ms: int


@dataclass(frozen=True, slots=True)
class InvalidSnapshot:
    """A retained snapshot that ``lakestore.commit.validate`` refuses, and why."""

    snapshot_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class TableCheck:
    """What ``table.maintenance.check()`` found: the number of retained snapshots it looked at,
    the commits whose rows no snapshot holds, and the snapshots whose metadata the table cannot
    hold (paths outside it, missing files, unknown schemas, fields out of range)."""

    snapshots: int
    unreferenced_commits: tuple[UnreferencedCommit, ...]
    invalid_snapshots: tuple[InvalidSnapshot, ...] = ()

    @property
    def ok(self) -> bool:
        """No unreferenced commit and no invalid snapshot was found."""
        return not self.unreferenced_commits and not self.invalid_snapshots


def check_table(table: FileStore) -> TableCheck:
    """Find commits whose rows no snapshot holds (see the module docstring). A young one may be a
    commit still in flight; an old one was lost or crashed: its files can be committed again
    (``TableCommit``) or removed (``remove_orphan_files``)."""
    table.schema.require_supported("check", table=table.path)
    files = TableFiles(table)
    keep = retained_references(table, files)
    referenced_data = {os.path.normpath(p) for p in keep.data}
    found: list[UnreferencedCommit] = []
    for status in table.file_io.list_status(files.store.manifest_dir):
        name = os.path.basename(status.path)
        if not name.startswith(_LIST_PREFIX) or name in keep.manifests:
            continue
        paths: list[str] = []
        rows = 0
        for entry in files.read_entries(files.read_list(name, tolerant=True), tolerant=True):
            if entry.kind != ADD:
                continue
            entry_paths = files.entry_paths(entry)
            path = entry_paths[0]  # at its _EXTERNAL_PATH, maybe on another file system
            if os.path.normpath(path) in referenced_data or not io_for(table.file_io, path, table.schema.options).exists(path):
                continue
            paths.append(path)
            rows += entry.file.row_count
        if paths:
            found.append(UnreferencedCommit(name, tuple(sorted(paths)), rows, status.mtime_ms))
    snapshots = len(table.snapshot_manager.list_ids())
    return TableCheck(snapshots, tuple(sorted(found, key=lambda c: c.modified_ms)), _invalid_snapshots(table))


def _invalid_snapshots(table: FileStore) -> tuple[InvalidSnapshot, ...]:
    """Every retained snapshot of the branch through the commit validation (one manifest cache:
    each manifest is read once)."""
    validator = SnapshotValidator(table.file_io, table.path, table.schema, cache=ValidatedManifests())
    schema_ids = set(table.schema_manager.list_ids())
    out = []
    for snapshot_id in table.snapshot_manager.list_ids():
        try:
            validator.validate(table.snapshot_manager.get(snapshot_id), schema_ids=schema_ids)
        except SnapshotNotFoundError:
            continue  # expired meanwhile
        except (InvalidCommitError, CorruptMetadataError) as exc:
            out.append(InvalidSnapshot(snapshot_id, str(exc)))
    return tuple(out)
