"""Branch management as Paimon's BranchManager does it: create a branch (empty, or from a tag),
delete it, and fast-forward main to a branch.

A branch lives in ``branch/branch-<name>/`` with its own ``snapshot/``, ``schema/``, ``tag/`` and
``consumer/`` folders; data and manifest files stay in the table directory and are shared, so
maintenance on any branch keeps what every branch references (``retained_references``).
"""

from __future__ import annotations

from lakestore.errors import BranchError, TagNotFoundError
from lakestore.lifecycle.tags import TagManager
from lakestore.meta.branch import MAIN_BRANCH, branch_names, branch_root, validate_branch_name
from lakestore.meta.confine import TableFolders, delete_dir_confined
from lakestore.meta.schema import SchemaManager
from lakestore.meta.snapshot import SnapshotManager
from lakestore.store import FileStore


def _require_main(table: FileStore, operation: str) -> None:
    if table.branch != MAIN_BRANCH:
        raise BranchError(f"{operation} works on the main branch; {table.identifier} is on branch {table.branch!r}")


def create_branch(table: FileStore, name: str, *, tag: str | None = None) -> None:
    """Create branch ``name``: from ``tag`` (its snapshot, the tag itself and the schemas up to the
    snapshot's), or empty with the table's current schema."""
    _require_main(table, "create_branch")
    validate_branch_name(name)
    root = branch_root(table.path, name)
    if name in branch_names(table.file_io, table.path):
        raise BranchError(f"branch {name!r} already exists in {table.path}")
    table.schema.require_supported("create a branch of", table=table.path)
    io = table.file_io
    branch_schemas = SchemaManager(io, root, publisher=table.publisher)
    if tag is None:
        branch_schemas.publish(table.schema)
        return
    tags = TagManager(table)
    if not tags.exists(tag):
        raise TagNotFoundError(f"tag {tag!r} does not exist in {table.path}")
    tagged = tags.get(tag).snapshot
    for schema_id in table.schema_manager.list_ids():
        if schema_id <= tagged.schema_id:
            branch_schemas.publish(table.schema_manager.get(schema_id))
    io.write_bytes(f"{root}/tag/{tags.path(tag).rsplit('/', 1)[-1]}", io.read_bytes(tags.path(tag)))
    snapshots = SnapshotManager(io, root)
    table.snapshot_commit.commit(snapshots, tagged)
    snapshots.write_latest_hint(tagged.id)
    snapshots.write_earliest_hint(tagged.id)


def delete_branch(table: FileStore, name: str) -> None:
    """Delete the branch's metadata; files only it referenced become orphans for
    ``remove_orphan_files`` (as in Paimon)."""
    _require_main(table, "delete_branch")
    validate_branch_name(name)
    if name not in branch_names(table.file_io, table.path):
        raise BranchError(f"branch {name!r} does not exist in {table.path}")
    folders = TableFolders.of(table.path, table.schema.options)
    delete_dir_confined(table.file_io, folders, branch_root(table.path, name), source=table.path)


def fast_forward(table: FileStore, name: str) -> None:
    """Make main the branch: main's snapshots, schemas and tags from the branch's earliest
    snapshot on are replaced by the branch's (Paimon's ``fastForward``). Files only main's
    dropped snapshots referenced become orphans."""
    _require_main(table, "fast_forward")
    validate_branch_name(name)
    if name not in branch_names(table.file_io, table.path):
        raise BranchError(f"branch {name!r} does not exist in {table.path}")
    table.schema.require_supported("fast-forward", table=table.path)
    io = table.file_io
    root = branch_root(table.path, name)
    branch_snapshots = SnapshotManager(io, root)
    earliest = branch_snapshots.earliest_id()
    if earliest is None:
        raise BranchError(f"branch {name!r} has no snapshot to fast-forward to")
    earliest_schema = branch_snapshots.get(earliest).schema_id
    main_snapshots = table.snapshot_manager
    main_tags = TagManager(table)
    for tag in main_tags.tags():
        if tag.snapshot_id >= earliest:
            io.delete(main_tags.path(tag.name))
    for snapshot_id in reversed(main_snapshots.list_ids()):
        if snapshot_id >= earliest:
            io.delete(main_snapshots.path(snapshot_id))
    for schema_id in reversed(table.schema_manager.list_ids()):
        if schema_id >= earliest_schema:
            io.delete(table.schema_manager.path(schema_id))
    for folder in ("schema", "snapshot", "tag"):
        for file_name in io.list_names(f"{root}/{folder}"):
            if not file_name.startswith(".") and not file_name.endswith(".tmp"):
                io.write_bytes(f"{table.path}/{folder}/{file_name}", io.read_bytes(f"{root}/{folder}/{file_name}"))
    latest = branch_snapshots.latest_id()
    if latest is not None:
        main_snapshots.write_latest_hint(latest)
    main_earliest = main_snapshots.list_ids()
    if main_earliest:
        main_snapshots.write_earliest_hint(main_earliest[0])
