"""Writers of one (partition, bucket): the LSM write buffer of primary-key tables and the
append buffer of append tables. Unless ``write-only``, a writer compacts its bucket as Paimon's
writers do: when a flush pushes the sorted runs above ``num-sorted-run.stop-trigger``
(back-pressure) and at every ``prepare_commit`` when the picker asks for it."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np
import pyarrow as pa

from lakestore.errors import CommitConflictError, UnsupportedTableError
from lakestore.format.arrow_ops import from_numpy, indices, rows_with_keys_in, sort_indices
from lakestore.format.arrow_ops import mask as arrow_mask
from lakestore.format.kv import SEQUENCE_NUMBER, VALUE_KIND
from lakestore.merge import MergeEngine, drop_retracts, retract_count
from lakestore.merge.changelog import diff_changelog
from lakestore.merge.engine import FirstRowEngine
from lakestore.merge.lookup import lookup_versions, uses_lookup_merge, with_level
from lakestore.meta.commit_message import CommitMessage, CompactResult
from lakestore.meta.index_manifest import IndexFileMeta
from lakestore.meta.manifest import FILE_SOURCE_COMPACT, DataFileMeta
from lakestore.write.file_writer import DataFileWriter
from lakestore.write.spill import SpillPiece


class Compactor(Protocol):
    def compact(self, files: list[DataFileMeta], *, full: bool) -> CompactResult: ...

    def sorted_run_count(self, files: list[DataFileMeta]) -> int: ...

    def read_file(self, f: DataFileMeta) -> pa.Table: ...

    def write_index(self) -> tuple[tuple[IndexFileMeta, ...], tuple[IndexFileMeta, ...]]: ...


def _ident(f: DataFileMeta) -> tuple[str, int]:
    return (f.file_name, f.level)


class BucketWriter:
    def __init__(
        self,
        file_writer: DataFileWriter,
        *,
        partition: bytes,
        bucket: int,
        total_buckets: int,
        next_sequence: int,
        existing_files: list[DataFileMeta],
        compactor: Compactor | None = None,
        auto_compact: bool = True,
        stop_trigger: int = 8,
    ) -> None:
        self.file_writer = file_writer
        self.partition = partition
        self.bucket = bucket
        self.total_buckets = total_buckets
        self.next_sequence = next_sequence
        self.existing_files = existing_files
        self.compactor = compactor
        self.auto_compact = auto_compact and compactor is not None
        self.stop_trigger = stop_trigger
        self.buffer: list[pa.Table] = []
        self.buffered_bytes = 0
        # rows that left the buffer for a spill file (lakestore/write/spill.py), oldest first:
        # they go into the next run with the buffer
        self.spilled: list[SpillPiece] = []
        self.spilled_bytes = 0
        self.new_files: list[DataFileMeta] = []
        self.compact_before: list[DataFileMeta] = []
        self.compact_after: list[DataFileMeta] = []
        self.changelog_files: list[DataFileMeta] = []
        self.compact_changelog: list[DataFileMeta] = []

    def write(self, rows: pa.Table, nbytes: int | None = None) -> None:
        """Buffer ``rows``; ``nbytes``: their size when the caller knows it (``Table.nbytes``
        of a slice walks its buffers)."""
        self.buffer.append(rows)
        self.buffered_bytes += rows.nbytes if nbytes is None else nbytes

    @property
    def spillable(self) -> bool:
        """Whether the buffer may go to a spill file instead of a run."""
        return True

    @property
    def pending_bytes(self) -> int:
        """The in-memory size of every row the next run holds: buffered and spilled."""
        return self.buffered_bytes + self.spilled_bytes

    def take_for_spill(self) -> list[pa.Table]:
        """Hand the buffered tables over to a spill file (``spilled`` gets their piece)."""
        chunks, self.buffer = self.buffer, []
        self.buffered_bytes = 0
        return chunks

    def add_spilled(self, piece: SpillPiece, nbytes: int) -> None:
        self.spilled.append(piece)
        self.spilled_bytes += nbytes

    def own_buffer(self) -> None:
        """Copy the buffered rows out of the input batches they may be slices of, so that a
        buffer kept across a flush of other buckets holds no whole batch alive."""
        if self.buffer:
            rows = pa.concat_tables(self.buffer)
            self.buffer = [rows.take(indices(np.arange(rows.num_rows)))] if rows.num_rows else []

    def flush(self) -> None:
        rows = self._take_buffer()
        if rows is not None and rows.num_rows:
            self.new_files.extend(self._write_run(rows))
            if (
                self.auto_compact
                and self.compactor is not None
                and self.compactor.sorted_run_count(self.current_files()) > self.stop_trigger
            ):
                self.compact(full=False)  # back-pressure: never leave more runs than the stop trigger

    def _write_run(self, rows: pa.Table) -> list[DataFileMeta]:
        raise NotImplementedError

    def current_files(self) -> list[DataFileMeta]:
        removed = {_ident(f) for f in self.compact_before}
        return [f for f in self.existing_files + self.new_files if _ident(f) not in removed] + self.compact_after

    def compact(self, *, full: bool) -> None:
        if self.compactor is None:
            return
        try:
            result = self.compactor.compact(self.current_files(), full=full)
        except CommitConflictError:
            return  # inputs expired under a stale plan: leave compaction to the next commit
        pending = {_ident(f): f for f in self.compact_after}
        for f in result.before:
            if _ident(f) in pending:
                # An output of an earlier compaction in this same commit: never committed, so it
                # leaves both lists; its file goes unless it is a shared (upgraded) file.
                del pending[_ident(f)]
                still_named = {
                    g.file_name for g in self.existing_files + self.new_files + self.compact_before + list(pending.values()) + result.after
                }
                if f.file_source == FILE_SOURCE_COMPACT and f.file_name not in still_named:
                    self.file_writer.delete_file(f.file_name)
            else:
                self.compact_before.append(f)
        self.compact_after = list(pending.values()) + result.after
        self.compact_changelog += result.changelog

    def before_commit(self) -> None:
        """Hook run after the final flush of a commit, before compaction (changelog lookup)."""

    def prepare_commit(self, *, full_compaction: bool = False) -> CommitMessage:
        self.flush()
        self.before_commit()
        if self.auto_compact:
            self.compact(full=full_compaction)
        # deletion-vector tables: the bucket's index file, rewritten when its vectors changed
        new_index, deleted_index = self.compactor.write_index() if self.compactor is not None else ((), ())
        message = CommitMessage(
            self.partition,
            self.bucket,
            self.total_buckets,
            new_files=tuple(self.new_files),
            changelog_files=tuple(self.changelog_files),
            compact_before=tuple(self.compact_before),
            compact_after=tuple(self.compact_after),
            compact_changelog_files=tuple(self.compact_changelog),
            new_index_files=new_index,
            deleted_index_files=deleted_index,
        )
        self.existing_files = self.current_files()
        self.new_files, self.compact_before, self.compact_after = [], [], []
        self.changelog_files, self.compact_changelog = [], []
        return message

    def _take_buffer(self) -> pa.Table | None:
        if not self.spilled and not self.buffer:
            return None
        parts = [piece.read() for piece in self.spilled] + self.buffer
        rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        self.buffer, self.spilled = [], []
        self.buffered_bytes = self.spilled_bytes = 0
        return rows


class AppendBucketWriter(BucketWriter):
    # data-evolution tables: every file counts its sequence numbers from 0 (Paimon's
    # AppendOnlyWriter gives each file a new counter), so every commit stamps its snapshot id
    per_file_sequence = False

    def _write_run(self, rows: pa.Table) -> list[DataFileMeta]:
        files = self.file_writer.write_append(rows, first_sequence=self.next_sequence)
        if self.per_file_sequence:
            return [replace(f, min_sequence_number=0, max_sequence_number=f.row_count - 1) for f in files]
        self.next_sequence += rows.num_rows
        return files


class MergeTreeBucketWriter(BucketWriter):
    """Buffers rows with their sequence numbers and row kinds; a flush sorts the buffer by key and
    sequence, merges each key's versions with the merge engine and writes a level-0 sorted run."""

    def __init__(
        self,
        file_writer: DataFileWriter,
        *,
        merge_engine: MergeEngine,
        key_names: list[str],
        sequence_fields: list[str],
        changelog_producer: str = "none",
        changelog_writer: DataFileWriter | None = None,
        row_deduplicate: bool = False,
        value_names: list[str] | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(file_writer, **kwargs)  # type: ignore[arg-type]
        self.merge_engine = merge_engine
        self.key_names = key_names
        self.sort_columns = key_names + sequence_fields + [SEQUENCE_NUMBER]
        self.changelog_producer = changelog_producer
        self.changelog_writer = changelog_writer
        self.row_deduplicate = row_deduplicate
        self.value_names = value_names or []
        if changelog_producer == "lookup" and merge_engine.seeding_options():
            # Paimon's lookup writers compact every commit, which decides when a -D (and the
            # values it seeds) is dropped; lakestore's lookup writers do not compact so
            raise UnsupportedTableError(
                f"{', '.join(merge_engine.seeding_options())} with changelog-producer 'lookup' is not implemented for writes",
                options=("changelog-producer", *merge_engine.seeding_options()),
            )
        self._input: list[pa.Table] = []
        self._buffer_sorted = False  # the buffer is one chunk, stably sorted by key

    @property
    def spillable(self) -> bool:
        # changelog-producer 'input' keeps its own references to the buffered rows
        return self.changelog_producer != "input"

    def write_kv(self, rows: pa.Table, kinds: pa.Array, *, arrival: np.ndarray | None = None) -> None:
        """Buffer rows numbered with the next sequence numbers in arrival order: the rows' order,
        or for rows sorted by key, ``arrival`` (each row's rank in arrival order)."""
        n = rows.num_rows
        ranks = np.arange(n, dtype=np.int64) if arrival is None else arrival.astype(np.int64, copy=False)
        sequence = from_numpy(self.next_sequence + ranks)
        self.next_sequence += n
        rows = rows.append_column(SEQUENCE_NUMBER, sequence).append_column(VALUE_KIND, kinds)
        self.write_sequenced(rows, sorted_by_key=arrival is not None)

    def write_sequenced(self, rows: pa.Table, *, sorted_by_key: bool = True, nbytes: int | None = None) -> None:
        """Buffer rows that already carry their ``_SEQUENCE_NUMBER`` (taken from this writer's
        ``next_sequence``) and ``_VALUE_KIND``, sorted by key when ``sorted_by_key``."""
        self._buffer_sorted = sorted_by_key and not self.buffer and not self.spilled
        if self.changelog_producer == "lookup" and self.merge_engine.keeps_deletes and retract_count(rows.column(VALUE_KIND)):
            raise UnsupportedTableError(
                "retractions (-U/-D) of a partial-update table with sequence groups and changelog-producer 'lookup' are not"
                " implemented for writes",
                options=("changelog-producer",),
            )
        prepared = self.merge_engine.prepare_input(rows)
        self.write(prepared, nbytes if prepared is rows else None)
        if self.changelog_producer == "input":
            self._input.append(prepared)  # shares buffers with the write buffer

    def _drop_existing_keys(self, merged: pa.Table) -> pa.Table:
        """first-row: a key already in the bucket keeps its first row, so later rows for it are
        dropped when written (as Paimon's first-row writers do with a lookup)."""
        files = self.current_files()
        if not files or self.compactor is None or not merged.num_rows:
            return merged
        existing = pa.concat_tables([self.compactor.read_file(f).select(self.key_names) for f in files])
        return _join_by_key(merged, existing, self.key_names, "left anti")

    def flush(self) -> None:
        if self._input and self.changelog_writer is not None:
            rows = pa.concat_tables(self._input)
            self._input = []
            ordered = self._sorted(rows, self.sort_columns)
            self.changelog_files.extend(self.changelog_writer.write_kv(ordered, level=0))
        super().flush()

    def before_commit(self) -> None:
        if self.changelog_producer == "lookup" and self.new_files and self.compactor is not None and self.changelog_writer is not None:
            self.changelog_files.extend(self._lookup_changelog())

    def _lookup_changelog(self) -> list[DataFileMeta]:
        """Each changed key's value before and after this commit, as Paimon's lookup producer
        emits it: read the committed files for the touched keys, merge, diff."""
        assert self.compactor is not None and self.changelog_writer is not None
        # rows carry their level: Paimon's LookupMergeFunction takes a key's level-0 rows and its
        # row at the lowest level >= 1 (the deeper ones are folded into that one)
        lookup = uses_lookup_merge(self.file_writer.schema.core_options())

        def read(f: DataFileMeta) -> pa.Table:
            assert self.compactor is not None
            rows = self.compactor.read_file(f)
            return with_level(rows, f.level) if lookup else rows

        def merged(rows: pa.Table) -> pa.Table:
            ordered = self._sorted(rows, self.sort_columns)
            if lookup:
                ordered = lookup_versions(ordered, self.key_names)
            return self.merge_engine.merge_and_drop_retracts(ordered, self.key_names)

        fresh = pa.concat_tables([read(f) for f in self.new_files])
        touched = fresh.select(self.key_names)  # a semi join keeps each row once whatever the duplicates
        old_parts = [read(f) for f in self.existing_files]
        old = pa.concat_tables(old_parts) if old_parts else fresh.slice(0, 0)
        if old.num_rows:
            old = _join_by_key(old, touched, self.key_names, "left semi").select(fresh.schema.names)
        before = merged(old)
        both = pa.concat_tables([old, fresh])
        after = merged(both)
        changes = diff_changelog(before, after, self.key_names, self.value_names, row_deduplicate=self.row_deduplicate)
        # Paimon writes lookup changelog at the compaction's output level; readers of deletion-vector
        # tables (batch scans filter level 0) would not see it at level 0.
        level = 1 if self.file_writer.schema.core_options().deletion_vectors else 0
        return self.changelog_writer.write_kv(changes, level=level) if changes.num_rows else []

    def _sorted(self, rows: pa.Table, columns: list[str]) -> pa.Table:
        """``rows`` ordered by ``columns``, descending sequence fields descending."""
        return rows.take(sort_indices(rows, columns, descending=self.merge_engine.descending_fields))

    def _write_run(self, rows: pa.Table) -> list[DataFileMeta]:
        # A key's rows in the buffer are in sequence-number order (chunks arrive in order and
        # keep each key's rows in arrival order): a stable sort by the key alone orders them by
        # (key, sequence), a cheaper sort; a buffer of one chunk sorted by key when it was routed
        # needs none.
        by_key = self.sort_columns == [*self.key_names, SEQUENCE_NUMBER]
        sorted_already = by_key and self._buffer_sorted
        ordered = rows if sorted_already else self._sorted(rows, self.key_names if by_key else self.sort_columns)
        self._buffer_sorted = False
        merged = self.merge_engine.merge(ordered, self.key_names)
        if isinstance(self.merge_engine, FirstRowEngine):
            merged = self._drop_existing_keys(merged)
        if not self.current_files() and not self.merge_engine.keeps_deletes:
            # Nothing older in this bucket can be retracted: keep the run free of delete rows
            # so that readers may read it without merging. (remove-record-on-delete engines
            # keep them, as Paimon writes them: a -D's values seed the key's later rows.)
            merged = drop_retracts(merged)
        return self.file_writer.write_kv(merged, level=0) if merged.num_rows else []


def _join_by_key(rows: pa.Table, keys: pa.Table, key_names: list[str], join_type: str) -> pa.Table:
    """The rows of ``rows`` a semi/anti join with ``keys`` keeps, in their order."""
    found = rows_with_keys_in(rows, keys, key_names)
    return rows.filter(arrow_mask(found if join_type == "left semi" else ~found))
