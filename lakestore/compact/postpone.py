"""The compaction of postpone-bucket tables (``bucket = -2``): it gives the rows in
``bucket-postpone/`` real buckets, as Paimon 2.0's postpone compaction (Flink's ``CompactAction``
on such tables, with ``PostponeUtils``, ``PostponeBucketCompactSplitSource``,
``PostponeBucketCompactOperator`` and ``BucketFiles``) does, in one COMPACT snapshot:

- the partitions compacted: those with postponed files, and those whose real buckets hold
  level-0 files (every bucket of theirs with level-0 files is compacted too);
- a partition's bucket count: the count its real buckets already have; else, with
  ``postpone.target-row-num-per-bucket``, ``ceil(postponed rows / target)``; else
  ``postpone.default-bucket-num`` (default 1);
- each partition's postponed files are replayed in creation-time order (stable), each file's rows
  in file order, through the real buckets' writers (bucket by the bucket key's hash, sequence
  numbers continuing each bucket's), then each touched bucket is compacted as a writer's
  commit compacts it (``full=True``: fully);
- the commit deletes the postponed files (bucket -2) and adds the new files as compaction
  outputs (files a compaction of this same run replaced are never committed).

Postponed files Paimon Java wrote are Avro; they are read as every data file is, in the format
their name gives (lakestore.format.avro).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakestore.commit.protocol import commit_or_abort
from lakestore.compact import BucketCompactor
from lakestore.errors import CommitConflictError, CorruptMetadataError, DataFileMissingError
from lakestore.format.binary_row import decode_row
from lakestore.format.kv import VALUE_KIND
from lakestore.format.partition_path import partition_path
from lakestore.io.factory import io_for
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.file_scan import live_entries
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.partitions import check_partition_specs
from lakestore.meta.paths import POSTPONE_BUCKET, TablePaths
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.schema_evolution import read_as_schema
from lakestore.write.bucket_writer import MergeTreeBucketWriter
from lakestore.write.file_writer import DataFileWriter
from lakestore.write.input import assign_buckets, split_by_partition_and_bucket
from lakestore.write.table_write import TableWrite

if TYPE_CHECKING:
    from lakestore.store import FileStore


def bucket_count(
    partition: bytes, known: Mapping[bytes, int], postponed_rows: Mapping[bytes, int], *, target_rows: int | None, default: int
) -> int:
    """Paimon's ``PostponeUtils.determineBucketNum``."""
    if partition in known:
        return known[partition]
    if target_rows is not None:
        rows = postponed_rows.get(partition, 0)
        return 1 if rows <= 0 else (rows - 1) // target_rows + 1
    return default


def compact_postpone(
    table: FileStore,
    *,
    full: bool = False,
    partitions: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    commit_user: str | None = None,
) -> list[Snapshot]:
    """Assign real buckets to the postponed rows of the chosen partitions (all by default) and
    compact the buckets they land in; one COMPACT snapshot (none when nothing is postponed and no
    real bucket holds level-0 files). Raises ``UnsupportedTableError`` for tables lakestore does
    not write, ``CommitConflictError`` when a concurrent commit removed an input."""
    schema = table.schema
    schema.require_supported("compact", table=table.path)
    snapshot = table.latest_snapshot()
    if snapshot is None:
        return []
    specs = check_partition_specs(schema.partition_keys, partitions)
    types = schema.types_of(schema.partition_keys)
    postponed: dict[bytes, list[DataFileMeta]] = {}
    known: dict[bytes, int] = {}
    level0: dict[bytes, set[int]] = {}
    for entry in live_entries(table.manifests(), snapshot):
        if entry.bucket == POSTPONE_BUCKET:
            postponed.setdefault(entry.partition, []).append(entry.file)
        elif entry.bucket >= 0 and entry.total_buckets > 0:
            if known.setdefault(entry.partition, entry.total_buckets) != entry.total_buckets:
                raise CorruptMetadataError(table.path, f"partition has bucket counts {known[entry.partition]} and {entry.total_buckets}")
            if entry.file.level == 0:
                level0.setdefault(entry.partition, set()).add(entry.bucket)
    options = schema.core_options()
    target_rows = options.get("postpone.target-row-num-per-bucket")
    rows = {p: sum(f.row_count for f in files) for p, files in postponed.items()}
    user = commit_user or f"compact-{uuid.uuid4()}"
    committer = table.new_commit(commit_user=user)
    messages: list[CommitMessage] = []
    try:
        for partition in dict.fromkeys([*postponed, *level0]):
            values = decode_row(partition, types)
            if specs is not None:
                named = dict(zip(schema.partition_keys, values, strict=False))
                if not any(all(named.get(k) == v for k, v in p.items()) for p in specs):
                    continue
            count = bucket_count(partition, known, rows, target_rows=target_rows, default=options.get("postpone.default-bucket-num"))
            files = sorted(postponed.get(partition, []), key=lambda f: f.creation_time_ms or 0)
            messages += _compact_partition(table, snapshot, values, files, sorted(level0.get(partition, ())), count, user=user, full=full)
    except BaseException:
        committer.abort(messages)  # nothing was committed: the partitions compacted so far leave nothing
        raise
    if not messages:
        return []
    # the one protocol: the outputs are deleted only when the commit provably did not land
    snapshot = commit_or_abort(committer, messages, abort=lambda: committer.abort(messages))
    return [] if snapshot is None else [snapshot]


def _compact_partition(
    table: FileStore,
    snapshot: Snapshot,
    values: tuple[Any, ...],
    files: list[DataFileMeta],
    level0_buckets: list[int],
    count: int,
    *,
    user: str,
    full: bool,
) -> list[CommitMessage]:
    fixed = replace(table.schema, options={**table.schema.options, "bucket": str(count), "write-only": "false"})
    write = _BucketWrite(table, fixed, snapshot, user)
    try:
        reader = _PostponedFiles(table, values)
        for f in files:
            write.replay(reader.read(f))
        for bucket in level0_buckets:
            write.touch(values, bucket)
        out = write.compacted(full=full)
    except BaseException:
        write.abort()
        raise
    if files:
        partition = out[0].partition if out else write.partition_binary(values)
        out.append(CommitMessage(partition, POSTPONE_BUCKET, POSTPONE_BUCKET, compact_before=tuple(files)))
    return out


class _BucketWrite(TableWrite):
    """The real buckets' writers of one partition, fed with postponed rows and their row kinds."""

    def __init__(self, table: FileStore, schema: TableSchema, snapshot: Snapshot, user: str) -> None:
        self._table = table

        def compactor(values: tuple[Any, ...], bucket: int, writer: DataFileWriter) -> BucketCompactor:
            return BucketCompactor(
                table.file_io, table.path, schema, table.schema_manager, partition_values=values, bucket=bucket, writer=writer
            )

        super().__init__(table.file_io, table.path, schema, table.manifests(), snapshot, commit_user=user, compactor_factory=compactor)

    def partition_binary(self, values: tuple[Any, ...]) -> bytes:
        return self._partition(values).binary

    def replay(self, rows: pa.Table) -> None:
        """``rows``: the table's columns and ``_VALUE_KIND``, in the order they were written."""
        if not rows.num_rows:
            return
        kinds = rows.column(VALUE_KIND).combine_chunks()
        data = rows.drop_columns([VALUE_KIND]).append_column("__kind", kinds)
        buckets = assign_buckets(data, self.schema)
        sort_keys = self.schema.trimmed_primary_keys
        for routed in split_by_partition_and_bucket(data, buckets, self.schema.partition_keys, sort_keys=sort_keys):
            writer = self._writer(routed.partition_values, routed.bucket)
            assert isinstance(writer, MergeTreeBucketWriter)
            chunk_kinds = routed.rows.column("__kind").combine_chunks()
            writer.write_kv(routed.rows.drop_columns(["__kind"]), chunk_kinds, arrival=routed.arrival)
        self._bound_memory()

    def touch(self, values: tuple[Any, ...], bucket: int) -> None:
        """Compact this bucket too (it holds level-0 files)."""
        self._writer(values, bucket)

    def compacted(self, *, full: bool) -> list[CommitMessage]:
        """Each bucket's new files as compaction outputs (Paimon's ``BucketFiles``): files written
        and compacted away in this run are deleted and never committed."""
        out = []
        for writer in self._writers.values():
            m = writer.prepare_commit(full_compaction=full)
            new = {f.file_name: f for f in m.new_files}
            kept_names = {f.file_name for f in m.compact_after}
            before = []
            for f in m.compact_before:
                if f.file_name in new:
                    del new[f.file_name]
                    if f.file_name not in kept_names:
                        writer.file_writer.delete_file(f.file_name)
                else:
                    before.append(f)
            after = tuple(new.values()) + m.compact_after
            changelog = m.changelog_files + m.compact_changelog_files
            message = CommitMessage(m.partition, m.bucket, m.total_buckets, compact_before=tuple(before), compact_after=after)
            message = replace(message, compact_changelog_files=changelog)
            if not message.is_empty:
                out.append(message)
        return out


class _PostponedFiles:
    """Reads postponed files of one partition as the current schema, with ``_VALUE_KIND``."""

    def __init__(self, table: FileStore, values: tuple[Any, ...]) -> None:
        self.table = table
        schema = table.schema
        path = partition_path(
            schema.partition_keys,
            schema.types_of(schema.partition_keys),
            values,
            default_name=schema.core_options().partition_default_name,
        )
        self.paths = TablePaths.of(table.path, schema).for_bucket(path, POSTPONE_BUCKET)
        self.columns = schema.field_names + [VALUE_KIND]

    def read(self, f: DataFileMeta) -> pa.Table:
        path = self.paths.to_path(f)
        file_io = io_for(self.table.file_io, path, self.table.schema.options)
        try:  # parquet, or the Avro files Paimon Java postpones (lakestore.format.avro)
            return read_as_schema(file_io, path, f, self.table.schema, self.table.schema_manager, self.columns)
        except (DataFileMissingError, FileNotFoundError) as exc:
            raise CommitConflictError(f"compaction input {f.file_name} was removed concurrently; plan again") from exc


__all__ = ["bucket_count", "compact_postpone"]
