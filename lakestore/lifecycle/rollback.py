"""Rollback (Paimon's RollbackHelper): make an older snapshot, or a tag, the latest again.

Order, chosen so that a crash at any point leaves a readable table and a re-run finishes:
1. to a tag whose snapshot has expired: publish ``snapshot-<id>`` from the tag first;
2. point LATEST at the target (a hint: readers still follow it forward while ``snapshot-<id+1>``
   exists, so a crash here shows the table as it was);
3. delete the newer snapshot files, newest first: the ids stay contiguous and every state in
   between is some earlier consistent snapshot;
4. delete tags on the removed snapshots (Paimon does the same);
5. delete data, changelog and manifest files that nothing retained references any more.
Before step 1 every file the removed snapshots and tags name is checked to lie in the table's
folders (``lakestore.meta.confine``): hostile or damaged metadata stops the rollback with
``PathOutsideTableError`` before anything changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakestore.errors import SnapshotNotFoundError
from lakestore.lifecycle.files import TableFiles, chain_references, delete_files
from lakestore.lifecycle.tags import TagManager, retained_references
from lakestore.meta.confine import METADATA, delete_confined
from lakestore.meta.snapshot import Snapshot

if TYPE_CHECKING:
    from lakestore.store import FileStore


def rollback_to(table: FileStore, *, snapshot_id: int | None = None, tag: str | None = None) -> Snapshot:
    if (snapshot_id is None) == (tag is None):
        raise ValueError("rollback_to needs exactly one of snapshot_id= or tag=")
    table.schema.require_supported("roll back", table=table.path)
    manager = table.snapshot_manager
    tags = TagManager(table)
    if tag is not None:
        target = tags.get(tag).snapshot
    else:
        assert snapshot_id is not None
        if not manager.exists(snapshot_id):
            raise SnapshotNotFoundError(f"snapshot {snapshot_id} does not exist in {table.path} (expired?); roll back to a tag instead")
        target = manager.get(snapshot_id)
    files = TableFiles(table)
    newer_ids = [i for i in manager.list_ids() if i > target.id]
    dropped = [manager.get(i) for i in newer_ids]
    candidates = chain_references(files, dropped, tolerant=True)
    dropped_tags = [t for t in tags.tags() if t.snapshot_id > target.id]
    for t in dropped_tags:
        candidates.update(chain_references(files, [t.snapshot], tolerant=True))
    files.require_inside(candidates, source=table.path)  # before anything changes
    if tag is not None and not manager.exists(target.id):
        table.snapshot_commit.commit(manager, target)  # restore the expired snapshot from its tag
    manager.write_latest_hint(target.id)
    metadata = [manager.path(i) for i in reversed(newer_ids)] + [tags.path(t.name) for t in dropped_tags]
    delete_confined(table.file_io, files.folders, [(METADATA, metadata)], source=table.path)
    earliest = manager.earliest_id()
    if earliest is not None and earliest >= target.id:
        manager.write_earliest_hint(target.id)
    delete_files(table, files, candidates, retained_references(table, files))
    return target
