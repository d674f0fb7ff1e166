"""TableWrite: routes rows to bucket writers, bounds buffered memory by ``write-buffer-size``,
and turns buffered data into CommitMessages."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa

from lakestore.errors import OptionError, PartitionValueError
from lakestore.format.arrow_ops import as_numpy, from_numpy
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.io.fileio import FileIO
from lakestore.merge import create_merge_engine
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.file_scan import live_entries
from lakestore.meta.index_manifest import read_index_manifest
from lakestore.meta.manifest import DataFileMeta, ManifestStore
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.write.bucket_writer import AppendBucketWriter, BucketWriter, Compactor, MergeTreeBucketWriter
from lakestore.write.cross_partition import CrossPartitionIndex, LiveKeys
from lakestore.write.dynamic_bucket import DynamicBuckets, key_hashes
from lakestore.write.file_writer import DataFileWriter, FileTarget
from lakestore.write.input import (
    PartitionSpec,
    RoutedBatch,
    assign_buckets,
    conform,
    filter_row_kinds,
    partition_spec,
    route,
    row_kinds,
    split_by_partition_and_bucket,
)
from lakestore.write.spill import Spiller

InputData: TypeAlias = "pa.Table | pa.RecordBatch | pa.RecordBatchReader | Iterable[pa.RecordBatch]"
# Builds the compactor of one bucket: (partition values, bucket, the bucket's file writer).
CompactorFactory = Callable[[tuple[Any, ...], int, DataFileWriter], Compactor]


class TableWrite:
    """Write rows of one table; ``prepare_commit`` returns messages for ``TableCommit``.

    Sequence numbers of each bucket continue from the bucket's maximum in ``base_snapshot``.
    Obtain one from ``Table.new_write``; as a context manager it deletes the files it wrote
    when the block raises.

    Raises:
        UnsupportedTableError: the table uses options or features lakestore cannot write.
        OptionError: an overwrite of a cross-partition upsert table.

    Example::

        with table.new_write(commit_user="job-1") as write:
            write.write_arrow(batch)
            messages = write.prepare_commit()  # list[CommitMessage]; to_bytes() to ship them
        table.new_commit(commit_user="job-1").commit(messages, commit_identifier=1)
    """

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        schema: TableSchema,
        manifests: ManifestStore,
        base_snapshot: Snapshot | None,
        *,
        commit_user: str,
        overwrite_partition: dict[str, Any] | None = None,
        compactor_factory: CompactorFactory | None = None,
        live_keys: LiveKeys | None = None,
    ) -> None:
        """``live_keys``: for cross-partition upsert tables, the primary keys of the base
        snapshot's live rows per (partition, bucket) (the table reads them; Paimon's IndexBootstrap)."""
        schema.require_supported("write", table=table_path)
        self.file_io = file_io
        self.table_path = table_path
        self.schema = schema
        self.options = schema.core_options()
        self.commit_user = commit_user
        self.primary_key = bool(schema.primary_keys)
        self.merge_engine = create_merge_engine(schema) if self.primary_key else None
        self._writers: dict[tuple[bytes, int], BucketWriter] = {}
        self._partitions: dict[tuple[Any, ...], PartitionSpec] = {}
        self._overwrite_partition = overwrite_partition
        self._compactor_factory = compactor_factory
        self._commits = 0
        self._existing = self._index_existing(manifests, base_snapshot)
        self._closed = False
        self._pool: ThreadPoolExecutor | None = None  # bucket writers' and routing's threads, made on first use
        self._spiller: Spiller | None = None  # spill files of the write buffer, made on first spill
        self._dynamic: DynamicBuckets | None = None
        self._cross: CrossPartitionIndex | None = None
        if schema.bucket_mode is BucketMode.KEY_DYNAMIC:
            if overwrite_partition is not None:
                raise OptionError(
                    f"{table_path}: overwriting a cross-partition upsert table (bucket=-1, primary key without partition keys)"
                    " is not implemented"
                )
            self._cross = CrossPartitionIndex(schema)
            if base_snapshot is not None and live_keys is not None:
                self._cross.bootstrap(live_keys(base_snapshot))
        elif schema.bucket_mode is BucketMode.HASH_DYNAMIC:
            index_manifest = base_snapshot.index_manifest if base_snapshot is not None else None
            index = read_index_manifest(file_io, table_path, index_manifest) if index_manifest else []
            self._dynamic = DynamicBuckets(file_io, table_path, schema, index, fresh=overwrite_partition is not None)

    @staticmethod
    def _index_existing(manifests: ManifestStore, snapshot: Snapshot | None) -> dict[tuple[bytes, int], list[DataFileMeta]]:
        index: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for entry in live_entries(manifests, snapshot):
            index.setdefault((entry.partition, entry.bucket), []).append(entry.file)
        return index

    # -- writing ------------------------------------------------------------------------------
    def write_arrow(self, data: InputData, *, row_kind: int | None = None) -> TableWrite:
        """Buffer ``data`` (flushed to files when ``write-buffer-size`` fills, and by
        ``prepare_commit``).

        Args:
            data: a ``pyarrow.Table``, ``RecordBatch``, ``RecordBatchReader``, an iterable of
                batches, or anything with ``__arrow_c_stream__``; columns matched by name.
            row_kind: primary-key tables (``lakestore.format.kv``'s codes): every row carries
                that kind (as Paimon's batch DELETE writes -D rows and UPDATE +U rows) instead of
                +I or the ``rowkind.field`` value.

        Returns:
            This writer.

        Raises:
            SchemaMismatchError: missing, unknown or mistyped columns (``NullKeyError``: a null
                in a primary-key column).
            PartitionValueError: a row outside the partition this writer overwrites.
            ValueError: ``row_kind`` on an append table.
        """
        if row_kind is not None and not self.primary_key:
            raise ValueError("row_kind applies to primary-key tables only")
        for batch in _batches(data):
            if batch.num_rows:
                self._write_table(pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch, row_kind)
        return self

    def _write_table(self, data: pa.Table, row_kind: int | None = None) -> None:
        rows = conform(data, self.schema)
        if row_kind is not None:
            kinds: pa.Array | None = from_numpy(np.full(rows.num_rows, row_kind, dtype=np.int8))
        else:
            kinds = row_kinds(rows, self.schema) if self.primary_key else None
        if kinds is not None:
            rows, kinds = filter_row_kinds(rows, kinds, self.schema)
            rows = rows.append_column("__kind", kinds)
        if self._cross is not None:
            rows, buckets = self._cross.route(rows)
        elif self._dynamic is not None:
            hashes = key_hashes(self.schema, rows)
            buckets = self._dynamic.assign(rows, hashes, self._partition)
            rows = rows.append_column("__hash", from_numpy(hashes))
        else:
            buckets = assign_buckets(rows, self.schema)
        if rows.num_rows == 0:
            return
        sort_keys = self.schema.trimmed_primary_keys if self.primary_key else ()
        per_row = rows.nbytes / rows.num_rows  # a slice's own nbytes walks its buffers
        if self.primary_key and self._dynamic is None and self._cross is None:
            self._write_kv_batch(route(rows, buckets, self.schema.partition_keys, sort_keys=sort_keys), per_row)
        else:
            for routed in split_by_partition_and_bucket(rows, buckets, self.schema.partition_keys, sort_keys=sort_keys):
                writer = self._writer(routed.partition_values, routed.bucket)
                chunk = routed.rows
                if self._dynamic is not None:
                    self._dynamic.maintainer(writer.partition, writer.bucket).add(as_numpy(chunk.column("__hash")))
                    chunk = chunk.drop_columns(["__hash"])
                if isinstance(writer, MergeTreeBucketWriter):
                    chunk_kinds = chunk.column("__kind").combine_chunks()
                    writer.write_kv(chunk.drop_columns(["__kind"]), chunk_kinds, arrival=routed.arrival)
                else:
                    writer.write(chunk, nbytes=int(per_row * chunk.num_rows))
        self._bound_memory()

    def _write_kv_batch(self, batch: RoutedBatch, per_row: float) -> None:
        """Primary-key rows of a routed batch: the sequence numbers and row kinds of every
        bucket's rows are columns of the whole batch (each bucket numbers its rows from its next
        sequence number, in arrival order), and each bucket buffers a zero-copy slice of it."""
        writers = [self._writer(values, bucket) for values, bucket in zip(batch.values, batch.buckets, strict=True)]
        starts = np.asarray(batch.starts, dtype=np.int64)
        counts = np.diff(starts)
        bases = np.empty(len(writers), dtype=np.int64)
        for i, (writer, count) in enumerate(zip(writers, counts.tolist(), strict=True)):
            bases[i] = writer.next_sequence
            writer.next_sequence += count
        assert batch.arrival is not None
        sequence = np.repeat(bases, counts) + batch.arrival
        rows = batch.rows
        kinds = rows.column("__kind")
        rows = rows.drop_columns(["__kind"]).append_column(SEQUENCE_NUMBER, from_numpy(sequence)).append_column(VALUE_KIND, kinds)
        per_row += 8  # the sequence numbers
        for writer, start, count in zip(writers, batch.starts[:-1], counts.tolist(), strict=True):
            assert isinstance(writer, MergeTreeBucketWriter)
            writer.write_sequenced(rows.slice(start, count), nbytes=int(per_row * count))

    def _partition(self, values: tuple[Any, ...]) -> PartitionSpec:
        spec = self._partitions.get(values)
        if spec is None:
            if self._overwrite_partition is not None:
                expected = self._overwrite_partition
                actual = dict(zip(self.schema.partition_keys, values, strict=False))
                mismatched = {k: v for k, v in expected.items() if actual.get(k) != v}
                if mismatched:
                    raise PartitionValueError(f"row with partition {actual} is outside the overwritten partition {expected}")
            spec = partition_spec(self.schema, values)
            self._partitions[values] = spec
        return spec

    def _writer(self, values: tuple[Any, ...], bucket: int) -> BucketWriter:
        spec = self._partition(values)
        key = (spec.binary, bucket)
        writer = self._writers.get(key)
        if writer is None:
            existing = list(self._existing.get(key, []))
            if self._overwrite_partition is not None:
                existing = []  # overwritten: nothing older survives the commit
            next_sequence = max((f.max_sequence_number for f in existing), default=-1) + 1
            file_writer = DataFileWriter(self.file_io, self.schema, FileTarget(self.table_path, spec.path, bucket))
            compactor = self._compactor_factory(values, bucket, file_writer) if self._compactor_factory is not None else None
            if self.options.row_tracking:
                # As Paimon's unaware-bucket writers: new files start at sequence 0, which the
                # commit turns into the snapshot id; no compaction (refused: row ids would be lost).
                next_sequence, compactor = 0, None
            if not self.primary_key and self.options.deletion_vectors:
                # Append files with deletion vectors are never compacted by lakestore (refused:
                # a rewrite must apply and retire the vectors): writers only add files.
                compactor = None
            common: dict[str, Any] = dict(
                partition=spec.binary,
                bucket=bucket,
                total_buckets=self.options.bucket,
                next_sequence=next_sequence,
                existing_files=existing,
                compactor=compactor,
                stop_trigger=self.options.stop_trigger,
                # write-only writers never compact: a dedicated compaction job does (Paimon's mode).
                auto_compact=not self.options.write_only,
            )
            if self.primary_key:
                assert self.merge_engine is not None
                writer = MergeTreeBucketWriter(
                    file_writer,
                    merge_engine=self.merge_engine,
                    key_names=list(self.schema.trimmed_primary_keys),
                    sequence_fields=list(self.options.sequence_fields),
                    changelog_producer=self.options.changelog_producer,
                    changelog_writer=DataFileWriter(self.file_io, self.schema, file_writer.target, prefix="changelog"),
                    row_deduplicate=self.options.changelog_row_deduplicate,
                    value_names=[f.name for f in self.schema.fields if f.name not in self.schema.primary_keys],
                    **common,
                )
            else:
                writer = AppendBucketWriter(file_writer, **common)
                writer.per_file_sequence = self.options.row_tracking and self.options.data_evolution
            self._writers[key] = writer
        return writer

    def _bound_memory(self) -> None:
        """Over ``write-buffer-size``: with ``write-buffer-spillable`` (Paimon's default), every
        bucket whose pending rows (buffered and spilled) reach a quarter of the budget writes
        them as a level-0 run, and the buffers of all other buckets go to one spill file, to
        join their bucket's run at the commit: a write spread over thousands of small buckets
        makes one file per bucket per commit, not one per bucket per buffer fill, and a
        bucket's run never holds more than a quarter of the budget plus one buffer's worth.
        Without spilling, flush the largest buffers (as Paimon does when its write buffer is
        full) down to half the budget: those flushes run in parallel, and runs keep about the
        size that flushing one buffer each time the budget fills would give them."""
        budget = self.options.write_buffer_size
        total = sum(w.buffered_bytes for w in self._writers.values())
        if total <= budget:
            return
        if self.options.write_buffer_spillable:
            cap = budget // 4
            buffered = [w for w in self._writers.values() if w.buffered_bytes]
            runs = [w for w in buffered if not w.spillable or w.pending_bytes >= cap]
            spills = [w for w in buffered if w.spillable and w.pending_bytes < cap]
            self._flush(runs)
            if spills:
                if self._spiller is None:
                    self._spiller = Spiller()
                sizes = [w.buffered_bytes for w in spills]
                pieces = self._spiller.spill([w.take_for_spill() for w in spills], sizes)
                for writer, piece, size in zip(spills, pieces, sizes, strict=True):
                    writer.add_spilled(piece, size)
            return
        chosen: list[BucketWriter] = []
        for writer in sorted(self._writers.values(), key=lambda w: w.buffered_bytes, reverse=True):
            if total <= budget // 2 or not writer.buffered_bytes:
                break
            chosen.append(writer)
            total -= writer.buffered_bytes
        self._flush(chosen)
        for writer in self._writers.values():
            writer.own_buffer()  # kept buffers may be slices of whole input batches

    def _flush(self, writers: list[BucketWriter]) -> None:
        if len(writers) > 1:
            list(self._threads().map(lambda w: w.flush(), writers))
        elif writers:
            writers[0].flush()

    # -- committing ---------------------------------------------------------------------------
    def prepare_commit(self) -> list[CommitMessage]:
        """Flush every bucket's buffer into data files (compacting as the table's options ask)
        and return what a ``TableCommit`` commits: one message per touched bucket, none for
        buckets without changes. The writer can go on writing for the next commit.

        Raises:
            CommitConflictError: a file this writer's compaction reads was removed concurrently.
        """
        self._commits += 1
        every = self.options.full_compaction_delta_commits
        full = every is not None and self._commits % every == 0
        writers = list(self._writers.values())
        if len(writers) > 1:
            # Buckets are independent; parquet encoding, sorting and hashing release the GIL.
            messages = list(self._threads().map(lambda w: w.prepare_commit(full_compaction=full), writers))
        else:
            messages = [w.prepare_commit(full_compaction=full) for w in writers]
        self._release_spills()  # every bucket has read its pieces
        if self._dynamic is not None:
            messages = self._dynamic.attach_index_files(messages)
        return [m for m in messages if not m.is_empty]

    def _release_spills(self) -> None:
        if self._spiller is not None:
            self._spiller.release()
            self._spiller = None

    def _threads(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2, thread_name_prefix="lakestore-write")
        return self._pool

    def _shutdown(self) -> None:
        self._release_spills()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def abort(self) -> None:
        """Delete every file this write created (only for writes that will not be committed).

        Raises:
            OSError: the file system failed.
        """
        for writer in self._writers.values():
            writer.file_writer.delete_written()
            changelog_writer = getattr(writer, "changelog_writer", None)
            if changelog_writer is not None:
                changelog_writer.delete_written()
            vectors = getattr(writer.compactor, "deletion_vectors", None)
            if vectors is not None:
                vectors.delete_written()  # deletion-vector index files of prepared commits
        if self._dynamic is not None:
            self._dynamic.delete_written()
        self._writers.clear()
        self._shutdown()

    def close(self) -> None:
        """Release the writer and its threads; the files it wrote stay (committed, or about to
        be). ``abort`` deletes them instead."""
        self._writers.clear()
        self._shutdown()
        self._closed = True

    def __enter__(self) -> TableWrite:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None and not self._closed:
            self.abort()
        self.close()


def _batches(data: InputData) -> Iterable[pa.Table | pa.RecordBatch]:
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        yield data
    elif isinstance(data, pa.RecordBatchReader):
        yield from data
    elif hasattr(data, "__arrow_c_stream__"):
        yield from pa.RecordBatchReader.from_stream(data)
    else:
        yield from data
