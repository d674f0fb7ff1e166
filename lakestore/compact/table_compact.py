"""Whole-table compaction: the buckets of a snapshot compacted and committed as one COMPACT
snapshot (Paimon's dedicated compaction job, batch mode), on a table's ``FileStore``."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lakestore.commit.protocol import commit_or_abort
from lakestore.compact.bucket import BucketCompactor, deletion_vectors_of
from lakestore.errors import UnsupportedTableError
from lakestore.format.binary_row import decode_row
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.file_scan import all_of, in_bucket_range, in_partitions, live_entries
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.partitions import check_partition_specs
from lakestore.meta.snapshot import Snapshot
from lakestore.store import FileStore


def bucket_files(store: FileStore, snapshot: Snapshot | None) -> dict[tuple[bytes, int], tuple[int, list[DataFileMeta]]]:
    """(partition, bucket) -> (total buckets, live files) of a snapshot."""
    out: dict[tuple[bytes, int], tuple[int, list[DataFileMeta]]] = {}
    for entry in live_entries(store.manifests(), snapshot):
        total, files = out.setdefault((entry.partition, entry.bucket), (entry.total_buckets, []))
        files.append(entry.file)
    return out


def _compact_files(
    store: FileStore, partition: bytes, bucket: int, total_buckets: int, files: list[DataFileMeta], *, full: bool, snapshot: Snapshot | None
) -> CommitMessage | None:
    values = decode_row(partition, store.schema.types_of(store.schema.partition_keys))
    vectors = deletion_vectors_of(store.file_io, store.path, store.schema, snapshot, partition_values=values, bucket=bucket)
    compactor = BucketCompactor(
        store.file_io, store.path, store.schema, store.schema_manager, partition_values=values, bucket=bucket, deletion_vectors=vectors
    )
    result = compactor.compact(files, full=full)
    if result.is_empty:
        return None
    new_index, deleted_index = compactor.write_index()
    return CommitMessage(
        partition,
        bucket,
        total_buckets,
        compact_before=tuple(result.before),
        compact_after=tuple(result.after),
        compact_changelog_files=tuple(result.changelog),
        new_index_files=new_index,
        deleted_index_files=deleted_index,
    )


def _refuse_postpone(store: FileStore) -> None:
    if store.schema.bucket_mode is BucketMode.POSTPONE_MODE:
        raise UnsupportedTableError(
            f"{store.path}: a postpone-bucket table (bucket=-2) is compacted as a whole by Table.compact (Paimon's postpone"
            " compaction assigns its buckets), not bucket by bucket",
            options=("bucket",),
        )


def compact_bucket(
    store: FileStore, partition: bytes, bucket: int, *, full: bool, snapshot: Snapshot | None = None
) -> CommitMessage | None:
    """Compact one bucket of the table's latest (or given) snapshot; None if nothing to do.
    Raises ``UnsupportedTableError`` on postpone-bucket tables."""
    _refuse_postpone(store)
    snapshot = snapshot if snapshot is not None else store.latest_snapshot()
    types = store.schema.types_of(store.schema.partition_keys)
    manifests = store.manifests()
    entries = live_entries(
        manifests,
        snapshot,
        manifest_filter=all_of(in_partitions([partition], types, source=manifests.manifest_dir), in_bucket_range([bucket])),
        entry_filter=lambda e: e.partition == partition and e.bucket == bucket,
    )
    if not entries:
        return None
    return _compact_files(store, partition, bucket, entries[0].total_buckets, [e.file for e in entries], full=full, snapshot=snapshot)


def _in_partitions(
    store: FileStore, buckets: Iterable[tuple[bytes, int]], partitions: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
) -> list[tuple[bytes, int]]:
    keys = store.schema.partition_keys
    specs = check_partition_specs(keys, partitions)
    types = store.schema.types_of(keys)
    selected = []
    for partition, bucket in sorted(buckets):
        if specs is not None:
            values = dict(zip(keys, decode_row(partition, types), strict=False))
            if not any(all(values.get(k) == v for k, v in p.items()) for p in specs):
                continue
        selected.append((partition, bucket))
    return selected


def select_buckets(
    store: FileStore, snapshot: Snapshot | None, partitions: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
) -> list[tuple[bytes, int]]:
    """The (partition, bucket)s of a snapshot in the chosen partitions (all by default); a
    partition naming a column that is not a partition key raises ``PartitionValueError``, a
    postpone-bucket table ``UnsupportedTableError``."""
    _refuse_postpone(store)
    return _in_partitions(store, bucket_files(store, snapshot), partitions)


def compact_table(
    store: FileStore, *, full: bool = False, partitions: Sequence[Mapping[str, Any]] | None = None, commit_user: str | None = None
) -> list[Snapshot]:
    """Compact the chosen partitions (all by default) and commit one COMPACT snapshot."""
    store.schema.require_supported("compact", table=store.path)
    _refuse_postpone(store)  # lakestore.compact.postpone
    snapshot = store.latest_snapshot()
    index = bucket_files(store, snapshot)  # one scan of the snapshot for every bucket
    messages = []
    for partition, bucket in _in_partitions(store, index, partitions):
        total_buckets, files = index[(partition, bucket)]
        message = _compact_files(store, partition, bucket, total_buckets, files, full=full, snapshot=snapshot)
        if message is not None:
            messages.append(message)
    if not messages:
        return []
    committer = store.new_commit(commit_user=commit_user or f"compact-{uuid.uuid4()}")
    # the one protocol: the outputs are deleted only when the commit provably did not land
    snapshot = commit_or_abort(committer, messages, abort=lambda: committer.abort(messages))
    return [] if snapshot is None else [snapshot]
