"""Writers of one (partition, bucket): the LSM write buffer of primary-key tables and the
append buffer of append tables."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import sort_indices
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.merge.engine import MergeEngine, drop_retracts
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.manifest import DataFileMeta
from lakestore.write.file_writer import DataFileWriter


class BucketWriter(ABC):
    def __init__(self, file_writer: DataFileWriter, *, partition: bytes, bucket: int, total_buckets: int, next_sequence: int, existing_files: list[DataFileMeta]) -> None:
        self.file_writer = file_writer
        self.partition = partition
        self.bucket = bucket
        self.total_buckets = total_buckets
        self.next_sequence = next_sequence
        self.existing_files = existing_files
        self.buffer: list[pa.Table] = []
        self.buffered_bytes = 0
        self.new_files: list[DataFileMeta] = []

    def write(self, rows: pa.Table) -> None:
        self.buffer.append(rows)
        self.buffered_bytes += rows.nbytes

    @abstractmethod
    def flush(self) -> None: ...

    def prepare_commit(self) -> CommitMessage:
        self.flush()
        message = CommitMessage(self.partition, self.bucket, self.total_buckets, new_files=tuple(self.new_files))
        self.existing_files = self.existing_files + self.new_files
        self.new_files = []
        return message

    def _take_buffer(self) -> pa.Table | None:
        if not self.buffer:
            return None
        rows = pa.concat_tables(self.buffer) if len(self.buffer) > 1 else self.buffer[0]
        self.buffer = []
        self.buffered_bytes = 0
        return rows


class AppendBucketWriter(BucketWriter):
    def flush(self) -> None:
        rows = self._take_buffer()
        if rows is None or rows.num_rows == 0:
            return
        files = self.file_writer.write_append(rows, first_sequence=self.next_sequence)
        self.next_sequence += rows.num_rows
        self.new_files.extend(files)


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
        self.write(rows.append_column(SEQUENCE_NUMBER, sequence).append_column(VALUE_KIND, kinds))

    def flush(self) -> None:
        rows = self._take_buffer()
        if rows is None or rows.num_rows == 0:
            return
        ordered = rows.take(sort_indices(rows, self.sort_columns))
        merged = self.merge_engine.merge(ordered, self.key_names)
        if not self.existing_files and not self.new_files:
            # Nothing older in this bucket can be retracted: keep the run free of delete rows
            # so that readers may read it without merging.
            merged = drop_retracts(merged)
        if merged.num_rows:
            self.new_files.extend(self.file_writer.write_kv(merged, level=0))
