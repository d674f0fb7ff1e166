"""The commit point of a table: how ``snapshot-N`` is published (Paimon's ``SnapshotCommit``).

A commit writes its manifests, then makes ``snapshot-N`` appear: atomically, and only if no other
commit published ``snapshot-N`` first (the loser re-reads and retries, ``TableCommit``). How that
happens depends on where the table is kept, and the catalog that opens the table chooses it; the
table's ``FileStore`` holds the choice (``FileStore.snapshot_commit``), and every snapshot
lakestore publishes (commits, branches, rollbacks, the REST server's commit endpoint) goes
through it:

- :class:`RenamingSnapshotCommit` (the default; filesystem, JDBC and Hive catalogs, tables opened
  by path): publishes with the table's ``MetadataPublisher`` (``lakestore.io.publish``), the
  file system's atomic create-if-absent: link(2) on local file systems, ``PUT`` with
  ``If-None-Match: *`` on object stores (``s3.conditional-create``), and, with ``lock.enabled``,
  under the catalog lock (Paimon's JDBC lock, or the Hive Metastore's table lock), which Paimon
  Java's writers of the same table hold too. The catalog chooses the publisher and the store
  holds it; the table's schemas and tags are published through the same publisher, under the
  same lock.
- :class:`CatalogSnapshotCommit` (``metastore=rest``): the catalog commits the snapshot (the
  REST server's commit endpoint, which validates it and publishes it with the renaming commit).

``FileIO`` itself only moves bytes: it knows no snapshot paths and holds no lock.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lakestore.errors import LakestoreError
from lakestore.io.publish import MetadataPublisher
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.meta.snapshot import Snapshot, SnapshotManager

__all__ = ["CatalogCommit", "CatalogSnapshotCommit", "RenamingSnapshotCommit", "SnapshotCommit"]

_BRANCH_DIR = "/branch/branch-"


class SnapshotCommit(ABC):
    """How a table publishes a snapshot: one implementation per kind of catalog, chosen when the
    table is opened and held by its ``FileStore`` (``lakestore.FileStore.snapshot_commit``)."""

    @abstractmethod
    def commit(self, snapshots: SnapshotManager, snapshot: Snapshot) -> bool:
        """Publish ``snapshot`` as ``snapshot-<id>`` of the branch whose snapshot files
        ``snapshots`` manages, atomically and only if no commit published that id first.

        Returns:
            True when this call published it; False when ``snapshot-<id>`` already exists
            (another commit won; nothing was changed).

        Raises:
            UnsafePublishError: object storage with neither the catalog lock nor conditional writes.
            LockAcquireTimeoutError: with ``lock.enabled``, the catalog lock was not acquired.
            CommitError: the catalog refused or did not understand the commit.
            OSError: the file system failed; whether the snapshot landed is then unknown.
        """


@dataclass(frozen=True, eq=False)
class RenamingSnapshotCommit(SnapshotCommit):
    """Publish with ``publisher`` (the catalog's choice, ``lakestore.io.factory.publisher_for``):
    the file system's atomic create-if-absent, link(2) locally, a conditional ``PUT`` on object
    stores, and under the catalog lock when the catalog configured one (``lock.enabled``), as
    Paimon's ``RenamingSnapshotCommit`` with its ``Lock``. None: the snapshot manager's file
    system without a lock."""

    publisher: MetadataPublisher | None = None

    def __repr__(self) -> str:
        return f"RenamingSnapshotCommit({self.publisher!r})" if self.publisher is not None else "RenamingSnapshotCommit()"

    def commit(self, snapshots: SnapshotManager, snapshot: Snapshot) -> bool:
        """See :meth:`SnapshotCommit.commit`."""
        publisher = self.publisher or MetadataPublisher(snapshots.file_io)
        return publisher.try_publish(snapshots.path(snapshot.id), snapshot.to_json().encode())


# (branch, snapshot, uuid of snapshot id - 1 or None) -> whether the catalog published it
CatalogCommit = Callable[[str, Snapshot, "str | None"], bool]


@dataclass(frozen=True, eq=False)
class CatalogSnapshotCommit(SnapshotCommit):
    """Publish through the catalog (Paimon's ``CatalogSnapshotCommit``): ``metastore=rest``
    tables are committed by the REST server's commit endpoint, which checks the snapshot and
    publishes it itself.

    ``send`` is the catalog's commit call: given the branch, the snapshot and the uuid of the
    snapshot before it (the server refuses a commit built on another parent), it returns
    whether the snapshot was published. ``table_path`` is the table directory (branches live
    under it). ``catalog`` names the catalog that opened the table (warehouse, options), so
    another process (Spark's executors) can open the table again through it.
    """

    send: CatalogCommit
    table_path: str
    catalog: tuple[str, Mapping[str, str]] | None = field(default=None, repr=False)

    def commit(self, snapshots: SnapshotManager, snapshot: Snapshot) -> bool:
        """See :meth:`SnapshotCommit.commit`."""
        branch = branch_of(self.table_path, snapshots.table_path)
        base_uuid = None
        if snapshot.id > 1 and snapshots.file_io.exists(snapshots.path(snapshot.id - 1)):
            base_uuid = json.loads(snapshots.file_io.read_bytes(snapshots.path(snapshot.id - 1))).get("uuid")
        return self.send(branch, snapshot, base_uuid)


def branch_of(table_path: str, metadata_path: str) -> str:
    """The branch whose metadata lives at ``metadata_path`` of the table at ``table_path``.

    Raises:
        LakestoreError: ``metadata_path`` is neither the table directory nor one of its branches.
    """
    root, where = table_path.rstrip("/"), metadata_path.rstrip("/")
    if where == root:
        return MAIN_BRANCH
    if where.startswith(root + _BRANCH_DIR) and "/" not in where[len(root + _BRANCH_DIR) :]:
        return where[len(root + _BRANCH_DIR) :]
    raise LakestoreError(f"{metadata_path} is not a branch of the table at {table_path}")
