"""A table's files on one branch, as Paimon's ``FileStore`` under its ``FileStoreTable``.

``FileStore`` holds what lifecycle, compaction and system tables work with: the paths, the
FileIO, the schema and its manager, the snapshot manager, the options, the manifests (one cached
store per table), how its metadata files are published (``publisher``: the FileIO and, with
``lock.enabled``, the catalog lock; ``lakestore.io.publish``) and the commit: how a snapshot is
published (``snapshot_commit``, the catalog's choice: ``lakestore.commit.snapshot_commit``) and
what runs after a commit (``callbacks``: tags,
expiration, Iceberg metadata, the table's choice: ``lakestore.commit.callbacks``). It knows no
read path beyond the split reader. ``lakestore.Table`` is the front door built on one.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lakestore.commit.callbacks import CommitCallback, function_callback
from lakestore.commit.commit import CommitHook, TableCommit
from lakestore.commit.snapshot_commit import RenamingSnapshotCommit, SnapshotCommit
from lakestore.errors import TableNotFoundError
from lakestore.io.fileio import FileIO
from lakestore.io.publish import MetadataPublisher
from lakestore.meta.branch import MAIN_BRANCH, branch_root
from lakestore.meta.file_info import FileInfo, IndexFileInfo, delta_files, index_files, live_files
from lakestore.meta.kinds import CommitKind
from lakestore.meta.manifest import ManifestStore
from lakestore.meta.options import CoreOptions
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.meta.snapshot import Snapshot, SnapshotManager
from lakestore.read.split_read import SplitReader

_UNSET: Any = object()


def _deprecated_post_commit(*, stacklevel: int) -> None:
    warnings.warn(
        "post_commit is deprecated: a store's post-commit work is its callbacks "
        "(FileStore.callbacks, lakestore.CommitCallback; lakestore.commit.callbacks)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


@dataclass(frozen=True, eq=False)
class FileStore:
    """One table on one branch: where its files are and how to commit to it.

    ``path`` is the table directory (data and manifest files, shared by all branches);
    ``metadata_path`` holds this branch's snapshots, schemas, tags and consumers. A store is
    immutable: a view with other options is ``dataclasses.replace(store, schema=...)`` (it
    shares the manifest cache and the post-commit hook)."""

    identifier: str  # "db.t" (the branch is ``branch``)
    path: str
    metadata_path: str
    branch: str
    file_io: FileIO
    schema: TableSchema
    schema_manager: SchemaManager
    snapshot_manager: SnapshotManager
    manifest_store: ManifestStore
    # how schemas and tags are published (``file_io``, with the catalog lock when the catalog
    # has one: ``lakestore.io.publish``); a ``RenamingSnapshotCommit`` publishes snapshots with it
    publisher: MetadataPublisher
    # the table's work after each commit that landed snapshots (``lakestore.commit.callbacks``)
    callbacks: tuple[CommitCallback, ...] = ()
    # how a snapshot is published (the catalog's choice; ``lakestore.commit.snapshot_commit``)
    snapshot_commit: SnapshotCommit = dataclasses.field(default_factory=RenamingSnapshotCommit)
    # deprecated: ``dataclasses.replace(store, post_commit=f)`` makes ``f`` the only callback
    # (None: none), as when the store had one post-commit function
    post_commit: dataclasses.InitVar[Any] = _UNSET

    def __post_init__(self, post_commit: Any) -> None:
        if post_commit is _UNSET:
            return
        _deprecated_post_commit(stacklevel=5)  # the caller of dataclasses.replace
        object.__setattr__(self, "callbacks", () if post_commit is None else (function_callback(post_commit),))

    @classmethod
    def open(
        cls,
        path: str,
        *,
        file_io: FileIO,
        identifier: str | None = None,
        branch: str = MAIN_BRANCH,
        callbacks: Sequence[CommitCallback] = (),
        snapshot_commit: SnapshotCommit | None = None,
        publisher: MetadataPublisher | None = None,
        post_commit: Callable[[Sequence[Snapshot]], None] | None = None,
    ) -> FileStore:
        """The store of the table at ``path`` on ``branch``, at its latest schema.
        ``callbacks``: what runs after each commit that landed (``lakestore.CommitCallback``);
        ``post_commit`` (deprecated) is one callback as a function.
        ``publisher``: how its schemas and tags (and, by default, snapshots) are published: the
        catalog's choice, ``lakestore.io.factory.publisher_for`` (with ``lock.enabled``, under the
        catalog lock). Default: the publisher of ``snapshot_commit`` when it is a
        ``RenamingSnapshotCommit`` with one, else ``file_io`` without a lock.
        ``snapshot_commit``: how its snapshots are published (default: ``RenamingSnapshotCommit``
        with ``publisher``; a REST catalog's tables commit through it).

        Raises:
            TableNotFoundError: no table (no schema file) at ``path`` or on ``branch``.
        """
        path = path.rstrip("/")
        if post_commit is not None:
            _deprecated_post_commit(stacklevel=3)
            callbacks = (*callbacks, function_callback(post_commit))
        metadata_path = branch_root(path, branch)
        if publisher is None and isinstance(snapshot_commit, RenamingSnapshotCommit):
            publisher = snapshot_commit.publisher
        publisher = publisher or MetadataPublisher(file_io)
        schema_manager = SchemaManager(file_io, metadata_path, publisher=publisher)
        schema = schema_manager.latest()
        if schema is None:
            where = path if branch == MAIN_BRANCH else f"branch {branch!r} of {path}"
            raise TableNotFoundError(f"no table at {where} (no schema files)")
        return cls(
            identifier=identifier or path.rsplit("/", 1)[-1],
            path=path,
            metadata_path=metadata_path,
            branch=branch,
            file_io=file_io,
            schema=schema,
            schema_manager=schema_manager,
            snapshot_manager=SnapshotManager(file_io, metadata_path),
            manifest_store=ManifestStore(file_io, path, compression=schema.core_options().manifest_compression),
            publisher=publisher,
            callbacks=tuple(callbacks),
            snapshot_commit=snapshot_commit or RenamingSnapshotCommit(publisher),
        )

    @functools.cached_property
    def options(self) -> CoreOptions:
        """The typed options of ``schema``."""
        return self.schema.core_options()

    @property
    def partition_keys(self) -> tuple[str, ...]:
        """The partition columns."""
        return self.schema.partition_keys

    def manifests(self) -> ManifestStore:
        """The manifest store (one per table, so parsed manifests stay cached)."""
        return self.manifest_store

    def latest_snapshot(self) -> Snapshot | None:
        """The latest snapshot of this branch (None: nothing committed yet).

        Raises:
            CorruptMetadataError: a snapshot file is not a valid Paimon snapshot.
            OSError: the file system failed.
        """
        return self.snapshot_manager.latest()

    def snapshot(self, snapshot_id: int) -> Snapshot:
        """Snapshot ``snapshot_id`` of this branch.

        Raises:
            SnapshotNotFoundError: it does not exist (never committed, or expired).
        """
        return self.snapshot_manager.get(snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """The retained snapshots of this branch, oldest first.

        Raises:
            CorruptMetadataError: a snapshot file is not a valid Paimon snapshot.
            OSError: the file system failed.
        """
        return list(self.snapshot_manager.snapshots())

    def find_commit(
        self, commit_user: str, commit_identifier: int, *, kind: CommitKind = "APPEND", after_id: int | None = None
    ) -> Snapshot | None:
        """The retained snapshot of a landed commit (commit user + identifier + kind), or None:
        never landed, or already expired (a tag on it outlives expiration). ``after_id``: look
        only at the snapshots after that one (None: every retained snapshot, newest first).

        Raises:
            CorruptMetadataError: a snapshot file is not a valid Paimon snapshot.
            OSError: the file system failed.
        """
        return self.snapshot_manager.find_committed(commit_user, commit_identifier, kind, after_id=after_id)

    def live_files(self, snapshot: Snapshot | None = None) -> list[FileInfo]:
        """The data files a snapshot (default: the latest) reads, with partition, bucket and level.

        Raises:
            CorruptMetadataError: a manifest list or manifest is not valid Paimon metadata.
            OSError: the file system failed.
        """
        return live_files(self.manifest_store, self.schema, snapshot if snapshot is not None else self.latest_snapshot())

    def delta_files(self, snapshot: Snapshot) -> list[FileInfo]:
        """The data files a snapshot added (``kind="ADD"``) and removed (``"DELETE"``).

        Raises:
            CorruptMetadataError: a manifest list or manifest is not valid Paimon metadata.
            OSError: the file system failed.
        """
        return delta_files(self.manifest_store, self.schema, snapshot)

    def index_files(self, snapshot: Snapshot | None = None) -> list[IndexFileInfo]:
        """The index files of ``snapshot`` (default: the latest): the key hash index of every
        bucket of a dynamic-bucket table, the deletion vectors of a deletion-vector table.

        Raises:
            CorruptMetadataError: the index manifest is not valid Paimon metadata.
            OSError: the file system failed.
        """
        return index_files(self.file_io, self.path, self.schema, snapshot if snapshot is not None else self.latest_snapshot())

    def schema_at(self, snapshot: Snapshot | None) -> TableSchema:
        """The schema a read of ``snapshot`` sees: the one it was written with (its ``schemaId``),
        under the current options, as Paimon reads it.

        Raises:
            CorruptMetadataError: the snapshot's schema file is missing or not a valid Paimon schema.
            OptionError: its options do not parse.
        """
        if snapshot is None or snapshot.schema_id == self.schema.id:
            return self.schema
        written = self.schema_manager.get(snapshot.schema_id)
        return dataclasses.replace(written, options={**written.options, **self.schema.options})

    def split_reader(self, schema: TableSchema | None = None) -> SplitReader:
        """The reader of this store's splits with ``schema`` (default: the latest)."""
        return SplitReader(self.file_io, self.path, schema or self.schema, self.schema_manager)

    def new_commit(self, *, commit_user: str, hook: CommitHook | None = None) -> TableCommit:
        """A committer for ``commit_user``'s messages; its commits publish with
        ``snapshot_commit`` and then run ``callbacks``.

        Args:
            commit_user: the writers' commit user.
            hook: called with the name of each step of a commit (for fault-injection tests).

        Raises:
            UnsupportedTableError: the table uses options or features lakestore cannot commit to.
        """
        return TableCommit(
            self.file_io,
            self.path,
            self.schema,
            commit_user=commit_user,
            hook=hook,
            manifests=self.manifest_store,
            metadata_path=self.metadata_path,
            callbacks=self.callbacks,
            snapshot_commit=self.snapshot_commit,
        )
