"""The compaction task (Paimon's MergeTreeCompactTask): split the unit's files into sections of
overlapping key ranges; rewrite overlapping sections and small files through the merge engine;
upgrade a lone large file to the output level by metadata only.

A rewritten section is read in key-range slices (``compact.slices``) and each slice merged on
its own, so memory holds a slice, not the section; the merged slices stream into the output
files (``compact.output``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from lakestore.compact.output import SortedRunWriter
from lakestore.compact.record_expire import RecordLevelExpire
from lakestore.compact.slices import SLICE_BYTES, FileBatches, key_slices
from lakestore.format.arrow_ops import sort_indices
from lakestore.format.binary_row import decode_row
from lakestore.format.kv import SEQUENCE_NUMBER
from lakestore.format.types import DataType
from lakestore.merge.engine import MergeEngine
from lakestore.merge.lookup import lookup_versions, with_level
from lakestore.meta.commit_message import CompactResult
from lakestore.meta.manifest import FILE_SOURCE_COMPACT, DataFileMeta
from lakestore.write.file_writer import DataFileWriter

ReadFile = Callable[[DataFileMeta], pa.Table]


def interval_partition(files: Sequence[DataFileMeta], key_types: Sequence[DataType]) -> list[list[DataFileMeta]]:
    """Sections of transitively overlapping key ranges, ordered by key."""
    keyed = sorted(
        ((decode_row(f.min_key, key_types, source=f.file_name), decode_row(f.max_key, key_types, source=f.file_name), f) for f in files),
        key=lambda t: (t[0], t[1]),
    )
    sections: list[list[DataFileMeta]] = []
    bound: tuple[Any, ...] | None = None
    for low, high, f in keyed:
        if bound is None or low > bound:
            sections.append([f])
            bound = high
        else:
            sections[-1].append(f)
            bound = max(bound, high)
    return sections


class MergeTreeCompactTask:
    def __init__(
        self,
        *,
        output_level: int,
        max_level: int,
        drop_delete: bool,
        min_file_size: int,
        key_names: Sequence[str],
        key_types: Sequence[DataType],
        sequence_fields: Sequence[str],
        merge_engine: MergeEngine,
        read_file: ReadFile,
        writer: DataFileWriter,
        older_rows: Callable[[pa.Table], pa.Table | None] | None = None,
        must_rewrite: Callable[[DataFileMeta], bool] | None = None,
        read_batches: FileBatches | None = None,
        slice_bytes: int = SLICE_BYTES,
        force_rewrite_all: bool = False,
        record_expire: RecordLevelExpire | None = None,
        lookup_merge: bool = False,
    ) -> None:
        """``read_batches``: a file's rows batch by batch (default: ``read_file`` whole), read
        into slices of about ``slice_bytes``."""
        self.output_level = output_level
        self.max_level = max_level
        self.drop_delete = drop_delete
        self.min_file_size = min_file_size
        self.key_names = list(key_names)
        self.key_types = list(key_types)
        self.sort_columns = self.key_names + list(sequence_fields) + [SEQUENCE_NUMBER]
        self.merge_engine = merge_engine
        self.read_file = read_file
        self.writer = writer
        # Deletion-vector tables: older versions of a section's keys found outside the unit (to
        # merge in), and level-0 files that cannot be upgraded by metadata alone.
        self.older_rows = older_rows
        self.must_rewrite = must_rewrite
        self.read_batches = read_batches or self._whole_file
        self.slice_bytes = slice_bytes
        # compaction.force-rewrite-all-files: no file keeps its bytes (Paimon rewrites instead of upgrading)
        self.force_rewrite_all = force_rewrite_all
        # record-level.expire-time: expired records are dropped from the files read, files
        # whose statistics show some are rewritten rather than upgraded (Paimon's upgrade)
        self.record_expire = record_expire
        self.slices_merged = 0  # for tests: how many slices the rewrites took
        # Paimon's LookupMergeFunction (lakestore.merge.lookup): rows carry their file's level
        # into the merge, which takes a key's level-0 rows and its row at the lowest level >= 1
        self.lookup_merge = lookup_merge
        if lookup_merge:
            batches = self.read_batches
            self.read_batches = lambda f: (with_level(batch, f.level) for batch in batches(f))

    def run(self, files: Sequence[DataFileMeta]) -> CompactResult:
        result = CompactResult()
        candidate: list[list[DataFileMeta]] = []
        for section in interval_partition(files, self.key_types):
            if len(section) > 1:
                candidate.append(section)
                continue
            single = section[0]
            if single.file_size < self.min_file_size:
                candidate.append([single])  # small files are rewritten with their neighbours
            else:
                self._rewrite(candidate, result)
                self._upgrade(single, result)
        self._rewrite(candidate, result)
        return result

    def rewrite_files(self, files: Sequence[DataFileMeta]) -> CompactResult:
        """Paimon's FileRewriteCompactTask: each file rewritten on its own to the output level."""
        result = CompactResult()
        for f in files:
            self._rewrite_sections([[f]], result)
        return result

    def _upgrade(self, f: DataFileMeta, result: CompactResult) -> None:
        if self.force_rewrite_all or (self.record_expire is not None and self.record_expire.holds_expired(f)):
            self._rewrite_sections([[f]], result)
            return
        if f.level == self.output_level:
            return
        if self.must_rewrite is not None and self.must_rewrite(f):
            self._rewrite_sections([[f]], result)
            return
        if self.output_level != self.max_level or (f.delete_row_count or 0) == 0:
            result.before.append(f)
            result.after.append(f.upgrade(self.output_level))
        else:
            # Delete rows must not reach the last level: rewrite instead of upgrading.
            self._rewrite_sections([[f]], result)

    def _rewrite(self, candidate: list[list[DataFileMeta]], result: CompactResult) -> None:
        if not candidate:
            return
        if len(candidate) == 1 and len(candidate[0]) == 1:
            self._upgrade(candidate[0][0], result)
        else:
            self._rewrite_sections(candidate, result)
        candidate.clear()

    def _rewrite_sections(self, sections: list[list[DataFileMeta]], result: CompactResult) -> None:
        # Sections hold disjoint key ranges in key order, and so do the slices of a section:
        # merged one after the other, they form one sorted run (the same rows in the same order
        # as merging each section at once).
        output = SortedRunWriter(self.writer, level=self.output_level, file_source=FILE_SOURCE_COMPACT)
        try:
            for section in sections:
                for rows in key_slices(section, self.read_batches, self.key_names, slice_bytes=self.slice_bytes):
                    output.write(self._merge(rows))
                    self.slices_merged += 1
                result.before.extend(section)
        except BaseException:
            output.abort()
            raise
        result.after.extend(output.finish())

    def _merge(self, rows: pa.Table) -> pa.Table:
        if self.record_expire is not None:
            rows = self.record_expire.keep(rows)
        older = self.older_rows(rows) if self.older_rows is not None else None
        if older is not None:
            rows = pa.concat_tables([older, rows])
        ordered = rows.take(sort_indices(rows, self.sort_columns, descending=self.merge_engine.descending_fields))
        if self.lookup_merge:
            ordered = lookup_versions(ordered, self.key_names)
        if self.drop_delete:
            return self.merge_engine.merge_and_drop_retracts(ordered, self.key_names)
        return self.merge_engine.merge(ordered, self.key_names)

    def _whole_file(self, f: DataFileMeta) -> Iterator[pa.Table]:
        yield self.read_file(f)
