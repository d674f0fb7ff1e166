"""TableCommit: CommitMessages -> manifest entries -> manifest file -> delta and base manifest
lists -> ``snapshot-N``, published atomically (as Paimon's FileStoreCommitImpl).

A losing publisher re-reads the latest snapshot and retries with backoff; before each retry it
checks whether its own commit (user + identifier + kind) already landed. Conflicts retrying
cannot fix raise ``CommitConflictError``. Files written by an attempt that provably did not land
are deleted; when the outcome is unknown (an error while publishing) nothing is deleted.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from typing import Any, cast

from lakestore.commit.callbacks import CommitCallback, CommitProperties, function_callback, run_callbacks
from lakestore.commit.conflicts import IndexChanges, check_file_conflicts
from lakestore.commit.snapshot_commit import RenamingSnapshotCommit, SnapshotCommit
from lakestore.errors import CommitConflictError, CommitRetriesExhaustedError, LakestoreError
from lakestore.format.binary_row import decode_row
from lakestore.format.hash_index import HASH_INDEX
from lakestore.io.fileio import FileIO
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.confine import DATA, INDEX, TableFolders, delete_confined
from lakestore.meta.file_scan import data_manifests, in_partitions, live_entries
from lakestore.meta.index_manifest import (
    DELETION_VECTORS_INDEX,
    IndexManifestEntry,
    combine,
    index_file_path,
    read_index_manifest,
    write_index_manifest,
)
from lakestore.meta.kinds import CommitKind
from lakestore.meta.manifest import ADD, DELETE, DataFileMeta, ManifestEntry, ManifestFileMeta, ManifestStore
from lakestore.meta.manifest_merge import merge_manifests, write_manifests
from lakestore.meta.paths import TablePaths
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot, SnapshotManager
from lakestore.meta.stats import EMPTY_STATS
from lakestore.write.row_tracking import assign_row_tracking

# True: the whole table; a mapping: one partition (a prefix of the partition keys); a sequence of
# mappings: several partitions (dropping partitions is an overwrite with no new files).
Overwrite = Mapping[str, Any] | Sequence[Mapping[str, Any]] | bool | None

# A test hook: called with a step name at each step of a commit (crash-injection tests).
CommitHook = Callable[[str], None]

_log = logging.getLogger(__name__)


@dataclass
class _Attempt:
    """Files one publish attempt wrote, deleted if it provably did not land."""

    manifests: list[str] = field(default_factory=list)


class CommitResult(list[Snapshot]):
    """What ``TableCommit.commit`` came to: the snapshots it returns, oldest first (APPEND or
    OVERWRITE, then COMPACT), as a list, and ``recognised``: the ids of those an earlier commit
    with the same commit user and identifier had landed (this call committed nothing for them,
    and its writers' files are unused)."""

    def __init__(self, snapshots: Sequence[Snapshot] = (), *, recognised: Set[int] = frozenset()) -> None:
        super().__init__(snapshots)
        self.recognised: frozenset[int] = frozenset(recognised)

    @property
    def already_landed(self) -> bool:
        """Whether every snapshot returned had landed before this call (an identical retry)."""
        return bool(self) and all(s.id in self.recognised for s in self)

    def __repr__(self) -> str:
        return f"CommitResult({list.__repr__(self)}, recognised={sorted(self.recognised)})"


class TableCommit:
    """Commits the ``CommitMessage``s of one or more ``TableWrite``s atomically, as one snapshot
    (plus a COMPACT one when the writers compacted); obtain one from ``Table.new_commit``.

    A commit user plus a commit identifier make a commit idempotent: committing the same
    identifier again returns the snapshots that landed and writes nothing. Commits that land
    run the table's post-commit maintenance (tags, expiration, Iceberg metadata); a failure
    there is logged, never raised.

    Example::

        commit = table.new_commit(commit_user="job-1")
        snapshots = commit.commit(messages, commit_identifier=42)
    """

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        schema: TableSchema,
        *,
        commit_user: str,
        hook: CommitHook | None = None,
        manifests: ManifestStore | None = None,
        metadata_path: str | None = None,
        callbacks: Sequence[CommitCallback] = (),
        snapshot_commit: SnapshotCommit | None = None,
        post_commit: Callable[[Sequence[Snapshot]], None] | None = None,
    ) -> None:
        """``metadata_path``: where this branch's snapshots live (default: the table directory,
        i.e. the main branch); data and manifest files always live under ``table_path``.
        ``callbacks`` run after every commit that landed snapshots (``lakestore.commit.callbacks``);
        their failures are logged, never raised (the commit landed). ``snapshot_commit`` publishes each snapshot (default:
        ``RenamingSnapshotCommit``, the file system's atomic create-if-absent)."""
        schema.require_supported("commit to", table=table_path)
        self.file_io = file_io
        self.table_path = table_path
        self.schema = schema
        self.options = schema.core_options()
        self.commit_user = commit_user
        self.snapshots = SnapshotManager(file_io, metadata_path or table_path)
        self.manifests = manifests or ManifestStore(file_io, table_path, compression=self.options.manifest_compression)
        self._hook = hook or (lambda step: None)
        self.callbacks = tuple(callbacks)
        if post_commit is not None:
            warnings.warn(
                "TableCommit(post_commit=...) is deprecated: pass callbacks=[...] (lakestore.CommitCallback, lakestore.commit.callbacks)",
                DeprecationWarning,
                stacklevel=2,
            )
            self.callbacks += (function_callback(post_commit),)
        self.snapshot_commit = snapshot_commit or RenamingSnapshotCommit()
        self._partition_types = schema.types_of(schema.partition_keys)
        self.paths = TablePaths.of(table_path, schema)
        # snapshot.ignore-empty-commit: Paimon's batch commits default to true (its streaming
        # commits always write a snapshot); lakestore applies the option to every commit.
        ignore_empty = self.options.get("snapshot.ignore-empty-commit")
        self._ignore_empty_commit = True if ignore_empty is None else bool(ignore_empty)
        self._key_types = schema.types_of(schema.trimmed_primary_keys) if schema.primary_keys else []
        # Whether the last ``commit`` reached a publish attempt (before that, a failure
        # provably did not land). What a failed ``commit`` leaves to read: an exception carries
        # no outcome; a successful one returns its ``CommitResult``.
        self.publish_attempted = False
        # the last result's ``recognised`` (kept for callers that read it after a commit)
        self.recognised: set[int] = set()
        # append tables without buckets keep several deletion-vector files per partition
        self._global_vectors = schema.bucket_mode is BucketMode.BUCKET_UNAWARE

    # -- public API ---------------------------------------------------------------------------
    def commit(
        self,
        messages: Sequence[CommitMessage],
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
        *,
        overwrite: Overwrite = None,
        watermark: int | None = None,
        properties: Mapping[str, str] | None = None,
        operation: str | None = None,
        commit_properties: CommitProperties | None = None,
    ) -> CommitResult:
        """Commit the messages; returns the snapshots created (APPEND or OVERWRITE, then COMPACT)
        as a ``CommitResult`` (a list, which also says which of them an earlier commit landed).
        ``operation``: the snapshots' ``operation`` (Paimon 2.0's ``Snapshot.Operation``, e.g.
        ``"DELETE"``, ``"UPDATE"``, ``"TRUNCATE"``, as its commits ``withOperation`` record it).

        An identical retry (same commit user and identifier) that already landed returns the
        landed snapshots and commits nothing twice. If the data landed but the writer's own
        compaction then conflicts, the compaction's outputs are deleted and only the data
        snapshot is returned.

        Args:
            messages: the ``prepare_commit()`` results of the writers (all of this commit user).
            commit_identifier: with the commit user, identifies the commit for retries
                (default: Paimon's batch identifier, ``BATCH_COMMIT_IDENTIFIER``).
            overwrite: ``True`` replaces the whole table, a dict of partition values (or a list
                of them) those partitions; None: append.
            watermark: stored in the snapshot (default: the parent's).
            properties: stored in the snapshot's ``properties``.
            operation: the snapshots' ``operation`` (see above).
            commit_properties: this commit's switches (``CommitProperties``: which of the
                table's callbacks run after it; default: all the table enables).

        Returns:
            The snapshots created, or the landed ones of an identical retry (their ids in
            ``recognised``); empty when there was nothing to commit.

        Raises:
            CommitConflictError: a concurrent commit removed or overlaps files this one changes
                (the messages' files are deleted when nothing landed).
            CommitRetriesExhaustedError: it lost the race ``commit.max-retries`` + 1 times.
            LockAcquireTimeoutError: with ``lock.enabled``, the catalog lock was not acquired.
            UnsafePublishError: object storage without the catalog lock or conditional writes.
        """
        appends: list[ManifestEntry] = []
        compacts: list[ManifestEntry] = []
        append_changelog: list[ManifestEntry] = []
        compact_changelog: list[ManifestEntry] = []
        append_index, compact_index = IndexChanges(), IndexChanges()
        for m in messages:

            def entries(kind: int, files: Sequence[DataFileMeta], m: CommitMessage = m) -> list[ManifestEntry]:
                return [ManifestEntry(kind, m.partition, m.bucket, m.total_buckets, f) for f in files]

            appends += entries(ADD, m.new_files)
            compacts += entries(DELETE, m.compact_before) + entries(ADD, m.compact_after)
            append_changelog += entries(ADD, m.changelog_files)
            compact_changelog += entries(ADD, m.compact_changelog_files)
            # Deletion vectors travel with the message's compaction (they come from the writer's
            # lookup compaction), else with its data; key hash indexes always with the data,
            # which must never land without them.
            if m.compact_before or m.compact_after:
                compact_index.add(m, types=(DELETION_VECTORS_INDEX,))
                append_index.add(m, types=(HASH_INDEX,))
            else:
                append_index.add(m, types=(DELETION_VECTORS_INDEX, HASH_INDEX))
        start = self.snapshots.latest_id()
        out: list[Snapshot] = []
        common: dict[str, Any] = dict(watermark=watermark, properties=properties, operation=operation)
        self.publish_attempted = False
        self.recognised = set()
        try:
            if overwrite is not None and overwrite is not False:
                out.append(
                    self._commit_kind(
                        "OVERWRITE",
                        appends,
                        commit_identifier,
                        start,
                        overwrite=overwrite,
                        changelog=append_changelog,
                        index=append_index,
                        **common,
                    )
                )
            elif appends or append_changelog or append_index or not self._ignore_empty_commit:
                out.append(
                    self._commit_kind("APPEND", appends, commit_identifier, start, changelog=append_changelog, index=append_index, **common)
                )
            if compacts or compact_changelog or compact_index:
                out.append(
                    self._commit_kind(
                        "COMPACT", compacts, commit_identifier, start, changelog=compact_changelog, index=compact_index, **common
                    )
                )
        except (CommitConflictError, CommitRetriesExhaustedError):
            if not out:
                self.abort(messages)
                raise
            # The data landed; only the writer's own compaction lost (a concurrent commit removed
            # its input files). Raising would report landed rows as failed and invite a duplicate
            # re-write, and a retry could never land that compaction: drop its outputs (provably
            # unreferenced: the attempt never published) and report what landed.
            data: list[str] = []
            index: list[str] = []
            for m in messages:
                upgraded = {f.file_name for f in m.compact_before}  # same file, new level: still live
                data += [self._data_path(m, f) for f in m.compact_after + m.compact_changelog_files if f.file_name not in upgraded]
                if m.compact_before or m.compact_after:
                    dv = [f for f in m.new_index_files if f.index_type == DELETION_VECTORS_INDEX]
                    index += [index_file_path(self.table_path, f.file_name) for f in dv]
            self._delete(data, index)
        if out:
            # maintenance must not turn a landed commit into a reported failure (a caller would
            # re-write the rows): callbacks' errors are logged, they run again after the next commit
            run_callbacks(self.callbacks, out, self.options, commit_properties, table=self.table_path)
        return CommitResult(out, recognised=self.recognised & {s.id for s in out})

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the data and index files written for ``messages`` (the commit will not happen).

        Raises:
            PathOutsideTableError: a message names a file outside the table's folders (nothing is
                deleted).
            OSError: the file system failed.
        """
        data = [self._data_path(m, f) for m in messages for f in m.written_files()]
        index = [index_file_path(self.table_path, f.file_name) for m in messages for f in m.new_index_files]
        self._delete(data, index)

    def filter_committed(self, identifiers: Sequence[int]) -> list[int]:
        """The identifiers this commit user has not committed yet (for restarts).

        Raises:
            CorruptMetadataError: a snapshot file is not a valid Paimon snapshot.
            OSError: the file system failed.
        """
        latest = self.snapshots.latest_identifier_of(self.commit_user)
        if latest is None:
            return list(identifiers)
        return [i for i in identifiers if i > latest]

    # -- one snapshot -------------------------------------------------------------------------
    def _commit_kind(
        self,
        kind: CommitKind,
        changes: list[ManifestEntry],
        identifier: int,
        start: int | None,
        *,
        changelog: list[ManifestEntry],
        index: IndexChanges,
        overwrite: Overwrite = None,
        watermark: int | None,
        properties: Mapping[str, str] | None,
        operation: str | None = None,
    ) -> Snapshot:
        retries = self.options.commit_max_retries
        overtaken = False  # a snapshot this commit published was replaced by another engine's
        for attempt in range(retries + 1):
            if identifier != BATCH_COMMIT_IDENTIFIER or attempt > 0:
                landed = self.snapshots.find_committed(
                    self.commit_user, identifier, kind, after_id=start if identifier == BATCH_COMMIT_IDENTIFIER else None
                )
                if landed is not None:
                    if attempt == 0 and not self.publish_attempted:
                        self.recognised.add(landed.id)
                    return landed
            latest = self.snapshots.latest()
            if overtaken and kind != "OVERWRITE" and _adds_live(self.manifests, latest, changes):
                # a writer built on the replaced snapshot before it was replaced: its files live on
                return cast(Snapshot, latest)
            delta = list(changes)
            base_live = live_entries(self.manifests, latest) if kind == "OVERWRITE" else self._touched_live(latest, delta)
            live_index: list[IndexManifestEntry] = []
            if (index or kind == "OVERWRITE") and latest is not None and latest.index_manifest:
                live_index = read_index_manifest(self.file_io, self.table_path, latest.index_manifest)
            attempt_index = index
            if kind == "OVERWRITE":
                overwritten = self._overwritten(overwrite)
                replaced = [e for e in base_live if overwritten(e.partition)]
                delta = [ManifestEntry(DELETE, e.partition, e.bucket, e.total_buckets, e.file) for e in replaced] + list(changes)
                # the overwritten partitions' index files (hash indexes, deletion vectors) go with their data
                attempt_index = index.with_deleted([e for e in live_index if overwritten(e.partition)])
            else:
                if kind == "APPEND" and self.options.get("commit.discard-duplicate-files"):
                    # Paimon's commit.discard-duplicate-files: files already live (a re-commit of the
                    # same messages) are not added twice; what is left still makes a snapshot.
                    live_ids = {e.identifier for e in base_live}
                    delta = [e for e in delta if e.identifier not in live_ids]
                check_file_conflicts(
                    base_live, delta, key_types=self._key_types if self.schema.primary_keys else None, source=self.manifests.manifest_dir
                )
            if attempt_index:
                attempt_index.check_conflicts(live_index)
            if self.options.get("manifest.delete-file-drop-stats"):
                delta = [_without_value_stats(e) if e.kind == DELETE else e for e in delta]
            snapshot, written = self._write_snapshot(
                kind, latest, delta, changelog, identifier, watermark, properties, attempt_index, live_index, operation
            )
            self._hook("before-publish")
            self.publish_attempted = True  # from here on, an error leaves the outcome unknown
            if self.snapshot_commit.commit(self.snapshots, snapshot):
                self._hook("after-publish")
                with contextlib.suppress(OSError):  # the snapshot landed; LATEST is a hint readers verify
                    self.snapshots.write_latest_hint(snapshot.id)
                self._hook("after-hint")
                if _still_published(self.snapshots, snapshot):
                    return snapshot
                # Another engine's publish replaced ours (Paimon Java's local rename checks and moves
                # under a lock of its own process only). Retry on top of its snapshot; keep what
                # this attempt wrote: a writer may have read the replaced snapshot already.
                _log.warning(
                    "snapshot %d of %s was replaced by another writer (%s) right after %s published it; committing again. "
                    "Share the catalog lock (lock.enabled) with every engine that commits to this table",
                    snapshot.id,
                    self.table_path,
                    _commit_user_of(self.snapshots, snapshot.id),
                    self.commit_user,
                )
                overtaken = True
                continue
            for name in written.manifests:  # provably not referenced: another snapshot took the id
                self.manifests.delete(name)
            self._backoff(attempt)
        raise CommitRetriesExhaustedError(f"commit of {kind} by {self.commit_user!r} lost the race {retries + 1} times")

    def _backoff(self, attempt: int) -> None:
        low = self.options.commit_min_retry_wait_ms
        high = self.options.commit_max_retry_wait_ms
        wait_ms = min(high, low * (2**attempt))
        time.sleep(wait_ms * (0.5 + random.random() / 2) / 1000)

    def _overwritten(self, overwrite: Overwrite) -> Callable[[bytes], bool]:
        """Whether a partition (serialized row) is replaced by ``overwrite``."""
        if overwrite is True:
            return lambda partition: True
        specs = [overwrite] if isinstance(overwrite, Mapping) else list(overwrite or ())
        positions = {name: i for i, name in enumerate(self.schema.partition_keys)}
        wanted = [{positions[k]: v for k, v in spec.items()} for spec in specs]

        def matches(partition: bytes) -> bool:
            values = decode_row(partition, self._partition_types, source=self.manifests.manifest_dir)
            return any(all(values[i] == v for i, v in spec.items()) for spec in wanted)

        return matches

    def _touched_live(self, latest: Snapshot | None, delta: list[ManifestEntry]) -> list[ManifestEntry]:
        """The live files of the partitions ``delta`` touches, which is all the conflict checks
        look at (they are per partition or per bucket): manifests whose partition statistics
        exclude those partitions are not read, so a commit costs the same however many
        partitions the table holds."""
        touched = {e.partition for e in delta}
        if not touched:
            return []
        return live_entries(
            self.manifests,
            latest,
            manifest_filter=in_partitions(touched, self._partition_types, source=self.manifests.manifest_dir),
            entry_filter=lambda e: e.partition in touched,
        )

    def _write_snapshot(
        self,
        kind: CommitKind,
        latest: Snapshot | None,
        delta: list[ManifestEntry],
        changelog: list[ManifestEntry],
        identifier: int,
        watermark: int | None,
        properties: Mapping[str, str] | None,
        index: IndexChanges,
        live_index: list[IndexManifestEntry],
        operation: str | None = None,
    ) -> tuple[Snapshot, _Attempt]:
        attempt = _Attempt()
        index_manifest: str | None = None
        try:
            if index:
                combined = combine(live_index, index.added, index.deleted, global_vectors=self._global_vectors)
                index_manifest = write_index_manifest(self.file_io, self.table_path, combined)
                attempt.manifests.append(index_manifest)
            schema_id = self.schema.id
            next_row_id: dict[str, int] = {}
            if self.options.row_tracking:
                # Paimon's RowTrackingCommitUtils: snapshot ids as sequence numbers, row ids from nextRowId
                parent_next = latest.next_row_id if latest is not None and latest.next_row_id is not None else 0
                new_id = (latest.id + 1) if latest is not None else 1
                grouped = bool(self.options.get("row-tracking.partition-group-on-commit"))
                delta, next_row_id["next_row_id"] = assign_row_tracking(new_id, parent_next, delta, group_by_partition=grouped)
            delta_metas = write_manifests(
                self.manifests,
                delta,
                schema_id=schema_id,
                partition_types=self._partition_types,
                target_size=self.options.manifest_target_size,
            )
            attempt.manifests += [m.file_name for m in delta_metas]
            self._hook("after-manifests")
            previous: list[ManifestFileMeta] = data_manifests(self.manifests, latest) if latest is not None else []
            base_metas, new_files = merge_manifests(
                self.manifests,
                previous,
                schema_id=schema_id,
                partition_types=self._partition_types,
                target_size=self.options.manifest_target_size,
                min_count=self.options.manifest_merge_min_count,
            )
            attempt.manifests += new_files
            base_name, base_size = self.manifests.write_list(base_metas)
            attempt.manifests.append(base_name)
            delta_name, delta_size = self.manifests.write_list(delta_metas)
            attempt.manifests.append(delta_name)
            changelog_name: str | None = None
            changelog_size: int | None = None
            if changelog:
                changelog_metas = write_manifests(
                    self.manifests,
                    changelog,
                    schema_id=schema_id,
                    partition_types=self._partition_types,
                    target_size=self.options.manifest_target_size,
                )
                attempt.manifests += [m.file_name for m in changelog_metas]
                changelog_name, changelog_size = self.manifests.write_list(changelog_metas)
                attempt.manifests.append(changelog_name)
            self._hook("after-lists")
        except BaseException:
            for name in attempt.manifests:
                self.manifests.delete(name)
            raise
        added = sum(e.file.row_count for e in delta if e.kind == ADD)
        removed = sum(e.file.row_count for e in delta if e.kind == DELETE)
        previous_total = latest.total_record_count if latest is not None else 0
        snapshot = Snapshot(
            id=(latest.id + 1) if latest is not None else 1,
            uuid=str(uuid.uuid4()),
            schema_id=self.schema.id,
            base_manifest_list=base_name,
            base_manifest_list_size=base_size,
            delta_manifest_list=delta_name,
            delta_manifest_list_size=delta_size,
            changelog_manifest_list=changelog_name,
            changelog_manifest_list_size=changelog_size,
            changelog_record_count=sum(e.file.row_count for e in changelog) if changelog else None,
            commit_user=self.commit_user,
            commit_identifier=identifier,
            commit_kind=kind,
            time_millis=int(time.time() * 1000),
            total_record_count=previous_total + added - removed,
            delta_record_count=added - removed,
            watermark=watermark if watermark is not None else (latest.watermark if latest is not None else None),
            properties=dict(properties) if properties else None,
            operation=operation,
            **{**_inherited(latest, self.schema.id), **({"index_manifest": index_manifest} if index_manifest else {}), **next_row_id},
        )
        return snapshot, attempt

    def _data_path(self, message: CommitMessage, f: DataFileMeta) -> str:
        return self.paths.file_path(self.paths.partition_path_of(message.partition), message.bucket, f)

    def _delete(self, data: Sequence[str], index: Sequence[str]) -> None:
        """Delete files this commit's writers wrote, iff all lie in the table's folders
        (``PathOutsideTableError`` otherwise: commit messages name their files, and a message
        from elsewhere may name any path)."""
        folders = TableFolders.of(self.table_path, self.schema.options)
        delete_confined(self.file_io, folders, [(DATA, data), (INDEX, index)], options=self.schema.options, source=self.table_path)


def _inherited(parent: Snapshot | None, schema_id: int) -> dict[str, Any]:
    """What a new snapshot takes over from its parent, as Paimon's committer does: the index
    manifest (hash and deletion-vector indexes), log offsets, table statistics while the schema
    is unchanged, and every field lakestore does not interpret."""
    if parent is None:
        return {"next_row_id": 0}
    return {
        "index_manifest": parent.index_manifest,
        "log_offsets": dict(parent.log_offsets) if parent.log_offsets else None,
        "statistics": parent.statistics if parent.schema_id == schema_id else None,
        # Paimon 2.0 without row tracking carries nextRowId unchanged (0 from the first snapshot)
        "next_row_id": parent.next_row_id if parent.next_row_id is not None else 0,
        "unknown_fields": dict(parent.unknown_fields),
    }


def _without_value_stats(entry: ManifestEntry) -> ManifestEntry:
    """A DELETE entry as Paimon writes it with ``manifest.delete-file-drop-stats``
    (``DataFileMeta.copyWithoutStats``): no value statistics, ``_VALUE_STATS_COLS`` empty; the
    identifier (what cancels the ADD) is unchanged."""
    f = replace(entry.file, value_stats=EMPTY_STATS, value_stats_cols=())
    return replace(entry, file=f)


def _still_published(snapshots: SnapshotManager, snapshot: Snapshot) -> bool:
    """Whether ``snapshot-N`` is still the one this commit published (its manifest lists carry
    names no other commit uses)."""
    try:
        current = snapshots.get(snapshot.id)
    except (LakestoreError, OSError):
        return True  # unverifiable now: the publish itself succeeded, and a landed commit is never reported failed
    return current.commit_user == snapshot.commit_user and current.delta_manifest_list == snapshot.delta_manifest_list


def _commit_user_of(snapshots: SnapshotManager, snapshot_id: int) -> str:
    try:
        return snapshots.get(snapshot_id).commit_user
    except (LakestoreError, OSError):
        return "unknown"


def _adds_live(manifests: ManifestStore, latest: Snapshot | None, changes: Sequence[ManifestEntry]) -> bool:
    """Whether the files ``changes`` adds are already live in ``latest``."""
    added = {e.file.file_name for e in changes if e.kind == ADD}
    if latest is None or not added:
        return False
    return any(e.file.file_name in added for e in live_entries(manifests, latest))
