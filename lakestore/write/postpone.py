"""Writes of postpone-bucket tables (``bucket = -2``, Paimon 1.1+), as Paimon 2.0's
``PostponeBucketFileStoreWrite`` / ``PostponeBucketWriter``.

Rows are not assigned to buckets: each partition's rows go, unsorted and unmerged in the order
they came, to level-0 files in ``bucket-postpone/`` (manifest bucket and total buckets -2), with
``_SEQUENCE_NUMBER`` -1, no value statistics, the first and last row's keys as min/max key and
key statistics of nulls. Files of one write are named ``<data-file.prefix>-u-<commit user>-s-<write
id>-w-<uuid>-<n>`` so that a compaction replays each writer's files in order. Batch reads do not
see them; the postpone compaction (``lakestore.compact.postpone``) assigns them real buckets.

Paimon Java writes these files as Avro (when Avro can hold the schema); lakestore writes them as
Parquet, as pypaimon does: Paimon's readers pick a file's reader by its extension.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.errors import UnsupportedTableError
from lakestore.format.arrow_ops import from_numpy, indices
from lakestore.format.binary_row import encode_values
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.manifest import DataFileMeta, SimpleStats
from lakestore.meta.paths import POSTPONE_BUCKET
from lakestore.meta.schema import TableSchema
from lakestore.write.bucket_writer import BucketWriter
from lakestore.write.file_writer import DataFileWriter, FileTarget
from lakestore.write.input import conform, filter_row_kinds, partition_groups, row_kinds
from lakestore.write.table_write import TableWrite

# Paimon's KeyValue.UNKNOWN_SEQUENCE: postpone files carry no sequence numbers (the compaction
# replays them in order and the real buckets' writers number the rows)
UNKNOWN_SEQUENCE = -1


def writer_prefix(schema: TableSchema, commit_user: str, write_id: int) -> str:
    """The file-name prefix of one postpone writer, without its trailing ``-`` (lakestore's
    path factory adds it): ``data--u-<user>-s-<id>-w``."""
    return f"{schema.core_options().get('data-file.prefix')}-u-{commit_user}-s-{write_id}-w"


def writer_of(file_name: str) -> str:
    """The writer part of a postpone file's name (Paimon's ``getWriterPrefix``); a file not named
    by a postpone writer is its own writer."""
    separator = file_name.rfind("-w-")
    return file_name if separator < 0 else file_name[: separator + 3]


class PostponeBucketWriter(BucketWriter):
    """The postpone bucket of one partition: buffered rows in arrival order, flushed to files."""

    def __init__(self, file_writer: DataFileWriter, *, partition: bytes, key_names: list[str], key_types: list[Any]) -> None:
        super().__init__(
            file_writer,
            partition=partition,
            bucket=POSTPONE_BUCKET,
            total_buckets=POSTPONE_BUCKET,
            next_sequence=0,
            existing_files=[],
            compactor=None,
            auto_compact=False,
        )
        self._null_key_stats = SimpleStats(
            encode_values(key_types, [None] * len(key_names)),
            encode_values(key_types, [None] * len(key_names)),
            tuple(None for _ in key_names),
        )

    def write_kv(self, rows: pa.Table, kinds: pa.Array) -> None:
        sequence = from_numpy(np.full(rows.num_rows, UNKNOWN_SEQUENCE, dtype=np.int64))
        self.write(rows.append_column(SEQUENCE_NUMBER, sequence).append_column(VALUE_KIND, kinds))

    def _write_run(self, rows: pa.Table) -> list[DataFileMeta]:
        # write_kv takes the first and last rows' keys as min/max key, as Paimon's writer of
        # unsorted postpone files does; its key statistics would assume sorted rows: Paimon
        # writes none (all null) there
        return [replace(f, key_stats=self._null_key_stats) for f in self.file_writer.write_kv(rows, level=0)]

    def prepare_commit(self, *, full_compaction: bool = False) -> CommitMessage:
        self.flush()
        message = CommitMessage(self.partition, POSTPONE_BUCKET, POSTPONE_BUCKET, new_files=tuple(self.new_files))
        self.new_files = []
        return message


class PostponeTableWrite(TableWrite):
    """``TableWrite`` of a postpone-bucket table: every partition's rows to its postpone bucket."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.primary_key:
            raise UnsupportedTableError("bucket=-2 (postpone buckets) on a table without a primary key", options=("bucket",))
        # one id per write, as Paimon's writers without a task id draw one (ThreadLocalRandom)
        self._prefix = writer_prefix(self.schema, self.commit_user, random.randrange(2**31 - 1))

    def _write_table(self, data: pa.Table, row_kind: int | None = None) -> None:
        rows = conform(data, self.schema)
        kinds = from_numpy(np.full(rows.num_rows, row_kind, dtype=np.int8)) if row_kind is not None else row_kinds(rows, self.schema)
        rows, kinds = filter_row_kinds(rows, kinds, self.schema)
        for values, positions in partition_groups(rows, self.schema.partition_keys):
            writer = self._postpone_writer(values)
            take = indices(positions)
            writer.write_kv(rows.take(take), kinds.take(take))
        self._bound_memory()

    def _postpone_writer(self, values: tuple[Any, ...]) -> PostponeBucketWriter:
        spec = self._partition(values)
        key = (spec.binary, POSTPONE_BUCKET)
        writer = self._writers.get(key)
        if writer is None:
            target = FileTarget(self.table_path, spec.path, POSTPONE_BUCKET)
            file_writer = DataFileWriter(self.file_io, self.schema, target, prefix=self._prefix)
            names = list(self.schema.trimmed_primary_keys)
            writer = PostponeBucketWriter(file_writer, partition=spec.binary, key_names=names, key_types=self.schema.types_of(names))
            self._writers[key] = writer
        assert isinstance(writer, PostponeBucketWriter)
        return writer
