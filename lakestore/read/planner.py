"""Scan planning: from a snapshot's manifests to splits, one per (partition, bucket), pruned by
partition values, buckets (a predicate pinning a fixed-bucket table's bucket key) and file
statistics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.file_scan import above_level, all_of, in_bucket_range, live_entries
from lakestore.meta.manifest import DataFileMeta, ManifestEntry, ManifestFileMeta, ManifestStore, SimpleStats
from lakestore.meta.paths import POSTPONE_BUCKET
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.bucket_prune import bucket_filter
from lakestore.read.deletion_vectors import DeletionFile, deletion_files, read_index_files
from lakestore.read.file_index import FileIndexFilter
from lakestore.read.predicate import Predicate, Stats


@dataclass(frozen=True)
class Levels:
    """The LSM levels a scan reads, ``low`` to ``high`` (None: no upper bound) inclusive, and
    the files in ``files`` whatever their level: Paimon's level filter
    (``SnapshotReader.withLevelFilter``), which its streaming reads put on the full phase of a
    table whose changelog comes from compaction."""

    low: int = 0
    high: int | None = None
    files: frozenset[str] = frozenset()

    def __contains__(self, level: object) -> bool:
        return isinstance(level, int) and level >= self.low and (self.high is None or level <= self.high)

    def keeps(self, file: DataFileMeta) -> bool:
        return file.level in self or file.file_name in self.files

    def manifest_filter(self) -> Callable[[ManifestFileMeta], bool] | None:
        """Keeps the manifests that may hold a file of these levels (a DELETE names its file's
        level, so a skipped manifest cannot hold the DELETE of a file read from another)."""
        if self.files:
            return None  # named files may be anywhere
        low, high = self.low, self.high

        def may_hold(meta: ManifestFileMeta) -> bool:
            if meta.max_level is not None and meta.max_level < low:
                return False
            return high is None or meta.min_level is None or meta.min_level <= high

        return may_hold


@dataclass(frozen=True)
class Split:
    """The live files of one (partition, bucket) and whether they can be read without merging."""

    partition: bytes
    partition_values: tuple[Any, ...]
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    raw_convertible: bool
    # deletion-vector tables: (data file name, where its vector is) for the files with deleted rows
    deletion_files: tuple[tuple[str, DeletionFile], ...] = ()

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)


class ScanPlan(list[Split]):
    """The splits of a scan, and what pruned files: ``files_skipped_by_index`` counts the data
    files whose statistics kept them but whose file indexes ruled the filter out."""

    def __init__(self, splits: Sequence[Split] = (), files_skipped_by_index: int = 0) -> None:
        super().__init__(splits)
        self.files_skipped_by_index = files_skipped_by_index


def _stats_dict(names: Sequence[str], types: Sequence[DataType], stats: SimpleStats, row_count: int, source: str) -> Stats:
    if stats.null_counts is None or len(stats.null_counts) != len(names):
        return {}
    mins = decode_row(stats.min_values, types, source=source)
    maxs = decode_row(stats.max_values, types, source=source)
    return {n: (lo, hi, nc, row_count) for n, lo, hi, nc in zip(names, mins, maxs, stats.null_counts, strict=False)}


def raw_convertible(files: Sequence[DataFileMeta], *, primary_key: bool) -> bool:
    """Paimon's rule: one file, or all files on one level >= 1 without delete rows."""
    if not primary_key or len(files) == 1:
        return True
    levels = {f.level for f in files}
    return len(levels) == 1 and 0 not in levels and all((f.delete_row_count or 0) == 0 for f in files)


class ScanPlanner:
    def __init__(self, schema: TableSchema, manifests: ManifestStore) -> None:
        self.schema = schema
        self.manifests = manifests
        self.partition_keys = list(schema.partition_keys)
        self.partition_types = schema.types_of(self.partition_keys)
        self.primary_key = bool(schema.primary_keys)
        self.key_names = list(schema.trimmed_primary_keys)
        self.key_types = schema.types_of(self.key_names) if self.primary_key else []
        # Paimon's readers never show level 0 of first-row tables: writers move each commit's
        # rows up (lookup compaction), so level 0 holds only rows still to be deduplicated.
        # Deletion-vector tables likewise: level-0 rows are not yet deduplicated against the
        # levels above, where vectors mask the older versions.
        self.deletion_vectors = schema.core_options().deletion_vectors
        self.skip_level0 = schema.reads_skip_level0
        self.postpone = schema.bucket_mode is BucketMode.POSTPONE_MODE
        # row tracking: files in row-id order; data evolution: a file's statistics say nothing of
        # the rows once newer files of its row-id range replace some columns, so no file pruning
        self.row_tracking = schema.core_options().row_tracking and not self.primary_key
        self.data_evolution = self.row_tracking and schema.core_options().data_evolution
        self._partitions: dict[bytes, tuple[Any, ...]] = {}

    def partition_values(self, partition: bytes) -> tuple[Any, ...]:
        values = self._partitions.get(partition)
        if values is None:
            values = decode_row(partition, self.partition_types, source=self.manifests.manifest_dir)
            self._partitions[partition] = values
        return values

    def _manifest_may_match(self, predicate: Predicate, meta: ManifestFileMeta) -> bool:
        if not self.partition_keys:
            return True
        return predicate.might_match(
            _stats_dict(self.partition_keys, self.partition_types, meta.partition_stats, 2**62, self.manifests.manifest_dir)
        )

    def _partition_may_match(self, predicate: Predicate, entry: ManifestEntry) -> bool:
        values = self.partition_values(entry.partition)
        stats = {n: (v, v, 1 if v is None else 0, 1) for n, v in zip(self.partition_keys, values, strict=False)}
        return predicate.might_match(stats)

    def _file_may_match(self, predicate: Predicate, entry: ManifestEntry) -> bool:
        f = entry.file
        source = f.file_name
        if self.primary_key:
            return predicate.might_match(_stats_dict(self.key_names, self.key_types, f.key_stats, f.row_count, source))
        names = list(f.value_stats_cols) if f.value_stats_cols is not None else self.schema.field_names
        if f.schema_id != self.schema.id or any(n not in self.schema.field_names for n in names):
            return True  # statistics of another schema version: do not trust names
        return predicate.might_match(_stats_dict(names, self.schema.types_of(names), f.value_stats, f.row_count, source))

    def plan(self, snapshot: Snapshot | None, predicate: Predicate | None = None, *, levels: Levels | None = None) -> ScanPlan:
        """The splits of ``snapshot``, pruned by ``predicate`` (partitions, buckets, statistics and
        file indexes); with ``levels``, only the files it keeps (as if the others were not there).
        Raises ``CorruptMetadataError`` for a corrupt file index."""
        if snapshot is None:
            return ScanPlan()
        manifest_filter = None
        entry_filter = None
        if predicate is not None:
            manifest_filter = lambda m: self._manifest_may_match(predicate, m)  # noqa: E731
            buckets = self._bucket_filter(predicate)
            if buckets is None:
                entry_filter = lambda e: self._partition_may_match(predicate, e)  # noqa: E731
            else:
                entry_filter = lambda e: _in_buckets(buckets, e) and self._partition_may_match(predicate, e)  # noqa: E731
                # manifests whose bucket range misses the predicate's buckets are not read
                manifest_filter = all_of(manifest_filter, in_bucket_range(buckets))
        if self.skip_level0:
            # nor, on deletion-vector and first-row tables, manifests holding only level 0
            manifest_filter = all_of(manifest_filter, above_level(0))
        if self.postpone:
            # Paimon's batch reads of a postpone-bucket table see only the real buckets its
            # compaction assigned: rows still in bucket-postpone are invisible until then
            manifest_filter = all_of(manifest_filter, lambda m: m.max_bucket is None or m.max_bucket != POSTPONE_BUCKET)
            entry_filter = all_entries(entry_filter, lambda e: e.bucket != POSTPONE_BUCKET)
        if levels is not None:
            wanted = levels
            manifest_filter = all_of(manifest_filter, wanted.manifest_filter())
            entry_filter = all_entries(entry_filter, lambda e: wanted.keeps(e.file))
        entries = live_entries(self.manifests, snapshot, manifest_filter=manifest_filter, entry_filter=entry_filter)
        groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
        for entry in entries:
            if self.skip_level0 and entry.file.level == 0:
                continue
            groups.setdefault((entry.partition, entry.bucket), []).append(entry)
        vectors = self._deletion_files(snapshot) if self.deletion_vectors else {}
        splits = ScanPlan()
        indexes = None
        if predicate is not None and FileIndexFilter.applies(self.schema):
            indexes = FileIndexFilter(self.schema, self.manifests.file_io, self.manifests.manifest_dir.rsplit("/", 1)[0], predicate)
        for (partition, bucket), group in groups.items():
            if predicate is not None and not self.data_evolution:
                group = [e for e in group if self._file_may_match(predicate, e)]
                if indexes is not None:
                    kept = [e for e in group if not indexes.skips(e)]
                    splits.files_skipped_by_index += len(group) - len(kept)
                    group = kept
                if not group:
                    continue
            files = tuple(sorted((e.file for e in group), key=self._file_order))
            splits.append(
                Split(
                    partition,
                    self.partition_values(partition),
                    bucket,
                    group[0].total_buckets,
                    files,
                    self.deletion_vectors or raw_convertible(files, primary_key=self.primary_key),
                    _bucket_deletion_files(vectors.get((partition, bucket)), files),
                )
            )
        splits.sort(key=lambda s: (s.partition, s.bucket))
        return splits

    def _file_order(self, f: DataFileMeta) -> tuple[int, int]:
        if self.row_tracking and f.first_row_id is not None:
            return (f.level, f.first_row_id)
        return (f.level, f.min_sequence_number)

    def _bucket_filter(self, predicate: Predicate) -> Callable[[int], set[int]] | None:
        if not self.schema.bucket_mode.key_determines_bucket:
            return None  # dynamic, unaware or postponed buckets: a key's bucket is not a function of it
        keys = list(self.schema.bucket_keys)
        return bucket_filter(predicate, keys, self.schema.types_of(keys), self.schema.core_options().get("bucket-function.type"))

    def _deletion_files(self, snapshot: Snapshot) -> dict[tuple[bytes, int], dict[str, DeletionFile]]:
        table_path = self.manifests.manifest_dir.rsplit("/", 1)[0]
        return deletion_files(read_index_files(self.manifests.file_io, table_path, snapshot))


def all_entries(first: Callable[[ManifestEntry], bool] | None, second: Callable[[ManifestEntry], bool]) -> Callable[[ManifestEntry], bool]:
    return second if first is None else lambda e: first(e) and second(e)


def _in_buckets(buckets: Callable[[int], set[int]], entry: ManifestEntry) -> bool:
    return entry.total_buckets <= 0 or entry.bucket in buckets(entry.total_buckets)


def _bucket_deletion_files(vectors: dict[str, DeletionFile] | None, files: Sequence[DataFileMeta]) -> tuple[tuple[str, DeletionFile], ...]:
    if not vectors:
        return ()
    return tuple((f.file_name, vectors[f.file_name]) for f in files if f.file_name in vectors)
