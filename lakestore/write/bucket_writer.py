"""Writers of one (partition, bucket): the LSM write buffer of primary-key tables and the
append buffer of append tables. Unless ``write-only``, a writer compacts its bucket as Paimon's
writers do: when a flush pushes the sorted runs above ``num-sorted-run.stop-trigger``
(back-pressure) and at every ``prepare_commit`` when the picker asks for it."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import sort_indices
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.merge import MergeEngine, drop_retracts
from lakestore.meta.commit_message import CommitMessage, CompactResult
from lakestore.meta.manifest import FILE_SOURCE_COMPACT, DataFileMeta
from lakestore.write.file_writer import DataFileWriter


class Compactor(Protocol):
    def compact(self, files: list[DataFileMeta], *, full: bool) -> CompactResult: ...

    def sorted_run_count(self, files: list[DataFileMeta]) -> int: ...


def _ident(f: DataFileMeta) -> tuple[str, int]:
    return (f.file_name, f.level)


class BucketWriter:
    def __init__(self, file_writer: DataFileWriter, *, partition: bytes, bucket: int, total_buckets: int, next_sequence: int, existing_files: list[DataFileMeta], compactor: Compactor | None = None, stop_trigger: int = 8) -> None:
        self.file_writer = file_writer
        self.partition = partition
        self.bucket = bucket
        self.total_buckets = total_buckets
        self.next_sequence = next_sequence
        self.existing_files = existing_files
        self.compactor = compactor
        self.stop_trigger = stop_trigger
        self.buffer: list[pa.Table] = []
        self.buffered_bytes = 0
        self.new_files: list[DataFileMeta] = []
        self.compact_before: list[DataFileMeta] = []
        self.compact_after: list[DataFileMeta] = []

    def write(self, rows: pa.Table) -> None:
        self.buffer.append(rows)
        self.buffered_bytes += rows.nbytes

    def flush(self) -> None:
        rows = self._take_buffer()
        if rows is not None and rows.num_rows:
            self.new_files.extend(self._write_run(rows))
            if self.compactor is not None and self.compactor.sorted_run_count(self.current_files()) > self.stop_trigger:
                self.compact(full=False)

    def _write_run(self, rows: pa.Table) -> list[DataFileMeta]:
        raise NotImplementedError

    def current_files(self) -> list[DataFileMeta]:
        removed = {_ident(f) for f in self.compact_before}
        return [f for f in self.existing_files + self.new_files if _ident(f) not in removed] + self.compact_after

    def compact(self, *, full: bool) -> None:
        if self.compactor is None:
            return
        result = self.compactor.compact(self.current_files(), full=full)
        pending = {_ident(f): f for f in self.compact_after}
        for f in result.before:
            if _ident(f) in pending:
                # An output of an earlier compaction in this same commit: never committed, so it
                # leaves both lists; its file goes unless it is a shared (upgraded) file.
                del pending[_ident(f)]
                still_named = {g.file_name for g in self.existing_files + self.new_files + self.compact_before + list(pending.values()) + result.after}
                if f.file_source == FILE_SOURCE_COMPACT and f.file_name not in still_named:
                    self.file_writer.delete_file(f.file_name)
            else:
                self.compact_before.append(f)
        self.compact_after = list(pending.values()) + result.after

    def prepare_commit(self) -> CommitMessage:
        self.flush()
        self.compact(full=False)
        message = CommitMessage(
            self.partition, self.bucket, self.total_buckets,
            new_files=tuple(self.new_files), compact_before=tuple(self.compact_before), compact_after=tuple(self.compact_after),
        )
        self.existing_files = self.current_files()
        self.new_files, self.compact_before, self.compact_after = [], [], []
        return message

    def _take_buffer(self) -> pa.Table | None:
        if not self.buffer:
            return None
        rows = pa.concat_tables(self.buffer) if len(self.buffer) > 1 else self.buffer[0]
        self.buffer = []
        self.buffered_bytes = 0
        return rows


class AppendBucketWriter(BucketWriter):
    def _write_run(self, rows: pa.Table) -> list[DataFileMeta]:
        files = self.file_writer.write_append(rows, first_sequence=self.next_sequence)
        self.next_sequence += rows.num_rows
        return files


class MergeTreeBucketWriter(BucketWriter):
    """Buffers rows with their sequence numbers and row kinds; a flush sorts the buffer by key and
    sequence, merges each key's versions with the merge engine and writes a level-0 sorted run."""

    def __init__(self, file_writer: DataFileWriter, *, merge_engine: MergeEngine, key_names: list[str], sequence_fields: list[str], **kwargs: object) -> None:
        super().__init__(file_writer, **kwargs)  # type: ignore[arg-type]
        self.merge_engine = merge_engine
        self.key_names = key_names
        self.sort_columns = key_names + sequence_fields + [SEQUENCE_NUMBER]

    def write_kv(self, rows: pa.Table, kinds: pa.Array) -> None:
        n = rows.num_rows
        sequence = pa.array(np.arange(self.next_sequence, self.next_sequence + n, dtype=np.int64))
        self.next_sequence += n
        self.write(self.merge_engine.prepare_input(rows.append_column(SEQUENCE_NUMBER, sequence).append_column(VALUE_KIND, kinds)))

    def _write_run(self, rows: pa.Table) -> list[DataFileMeta]:
        ordered = rows.take(sort_indices(rows, self.sort_columns))
        merged = self.merge_engine.merge(ordered, self.key_names)
        if not self.current_files():
            # Nothing older in this bucket can be retracted: keep the run free of delete rows
            # so that readers may read it without merging.
            merged = drop_retracts(merged)
        return self.file_writer.write_kv(merged, level=0) if merged.num_rows else []
