"""Deletion vectors on write (``deletion-vectors.enabled``), as Paimon 0.9's
``DeletionVectorsMaintainer`` and ``LookupMergeTreeCompactRewriter`` keep them.

A writer of a deletion-vector table moves level 0 up at every commit (ForceUpLevel0). Before
that compaction, every key of the level-0 files is looked up in the files it does not touch
(all on higher levels): the live older version found there is marked deleted in that file's
vector, and merged into the new row by engines that need the old value (partial-update,
aggregation, sequence fields). Readers then read levels >= 1 with vectors applied, without
merging. Files a compaction rewrites lose their vectors; upgraded files keep theirs.

New vectors are 64-bit when the table sets ``deletion-vectors.bitmap64`` (Paimon 1.2+); a vector
read from an index file keeps its kind when rewritten, as Paimon's ``BucketedDvMaintainer`` keeps
a restored vector's class.

One bucket has one index file: each change rewrites it whole and the old one is deleted.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import as_numpy, from_numpy, indices, rows_with_keys_in, sorted_unique
from lakestore.format.arrow_ops import mask as arrow_mask
from lakestore.format.deletion_vector import encode_index_file
from lakestore.io.fileio import FileIO
from lakestore.meta.commit_message import CompactResult
from lakestore.meta.index_manifest import DELETION_VECTORS_INDEX, DeletionVectorRange, IndexFileMeta
from lakestore.meta.manifest import DataFileMeta
from lakestore.meta.schema import SchemaManager
from lakestore.meta.snapshot import Snapshot
from lakestore.read.deletion_vectors import DeletionFile, IndexFile, apply_vector, index_dir, read_index_files, read_vectors_and_kinds

POSITION = "_ROW_POSITION"  # the row's position in its file, for lookups


class DeletionVectorsMaintainer:
    """The deletion vectors of one (partition, bucket) while a writer or compaction runs."""

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        *,
        partition: bytes,
        bucket: int,
        vectors: dict[str, np.ndarray],
        index_files: list[IndexFile],
        bitmap64: bool = False,
        kinds: dict[str, bool] | None = None,
    ) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.partition = partition
        self.bucket = bucket
        self._vectors = vectors
        self._index_files = index_files
        self.bitmap64 = bitmap64
        self._kinds = dict(kinds or {})  # data file -> whether its vector is 64-bit (restored ones)
        self._modified = False
        self._written: list[str] = []
        self._prefix = f"index-{uuid.uuid4()}"
        self._counter = itertools.count()

    @classmethod
    def restore(
        cls,
        file_io: FileIO,
        table_path: str,
        snapshot: Snapshot | None,
        *,
        partition: bytes,
        bucket: int,
        bitmap64: bool | None = None,
    ) -> DeletionVectorsMaintainer:
        """The bucket's vectors as of ``snapshot``. New vectors are 64-bit when ``bitmap64``
        (``deletion-vectors.bitmap64``; None: as the table's latest schema sets it)."""
        index_files = [f for f in read_index_files(file_io, table_path, snapshot) if f.partition == partition and f.bucket == bucket]
        where = {
            name: DeletionFile(f.file_name, offset, length, external_path=f.external_path)
            for f in index_files
            for name, offset, length in f.ranges
        }
        read = read_vectors_and_kinds(file_io, table_path, where)
        if bitmap64 is None:
            latest = SchemaManager(file_io, table_path).latest()
            bitmap64 = latest is not None and bool(latest.core_options().get("deletion-vectors.bitmap64"))
        return cls(
            file_io,
            table_path,
            partition=partition,
            bucket=bucket,
            vectors={name: positions for name, (positions, _) in read.items()},
            index_files=index_files,
            bitmap64=bitmap64,
            kinds={name: wide for name, (_, wide) in read.items()},
        )

    def vector(self, file_name: str) -> np.ndarray | None:
        return self._vectors.get(file_name)

    def current(self) -> dict[str, np.ndarray]:
        """A copy of the vectors as they are now (arrays are never changed in place)."""
        return dict(self._vectors)

    def delete(self, file_name: str, positions: np.ndarray) -> None:
        if not len(positions):
            return
        old = self._vectors.get(file_name)
        merged = sorted_unique(positions if old is None else np.concatenate([old.astype(np.int64), positions.astype(np.int64)]))
        merged = merged.astype(np.uint32 if not len(merged) or int(merged[-1]) <= 0xFFFFFFFF else np.uint64)
        if old is None or len(merged) != len(old):
            self._vectors[file_name] = merged
            self._modified = True

    def remove(self, file_name: str) -> None:
        self._kinds.pop(file_name, None)
        if self._vectors.pop(file_name, None) is not None:
            self._modified = True

    def forget_restored(self) -> None:
        """Start from no vectors and no index files: an overwrite replaces the bucket's files,
        and its commit retires their index files."""
        self._vectors.clear()
        self._kinds.clear()
        self._index_files = []
        self._modified = False

    def write_index(self) -> tuple[tuple[IndexFileMeta, ...], tuple[IndexFileMeta, ...]]:
        """(new index files, index files they replace) when the vectors changed, else empty."""
        new, replaced = self._write_index()
        return tuple(index_file_meta(f, self._vectors) for f in new), tuple(index_file_meta(f) for f in replaced)

    def _write_index(self) -> tuple[list[IndexFile], list[IndexFile]]:
        if not self._modified:
            return [], []
        self._modified = False
        replaced, self._index_files = self._index_files, []
        live = {name: positions for name, positions in sorted(self._vectors.items()) if len(positions)}
        if live:
            data, ranges = encode_index_file(live, bitmap64=self.bitmap64, kinds=self._kinds)
            name = f"{self._prefix}-{next(self._counter)}"
            path = f"{index_dir(self.table_path)}/{name}"
            self.file_io.write_bytes(path, data)
            self._written.append(path)
            written = IndexFile(
                self.partition, self.bucket, name, len(data), len(ranges), tuple((r.data_file, r.offset, r.length) for r in ranges)
            )
            # what was written keeps its kind in later rewrites by this maintainer
            self._kinds.update((r.data_file, r.bitmap64) for r in ranges)
            self._index_files = [written]
        return list(self._index_files), replaced

    def delete_written(self) -> None:
        """Remove the index files this maintainer wrote (a write that will not be committed)."""
        for path in self._written:
            self.file_io.delete(path)
        self._written.clear()


@dataclass(frozen=True)
class LookupResult:
    """Older versions found on the levels a compaction leaves alone."""

    deletions: dict[str, np.ndarray]  # data file name -> positions to mark deleted
    rows: pa.Table | None  # those rows, when the merge engine needs old values

    def older_rows(self, rows: pa.Table, key_names: Sequence[str]) -> pa.Table | None:
        """The older versions of the keys in ``rows`` (to merge with them), or None."""
        if self.rows is None or not self.rows.num_rows:
            return None
        found = self.rows.filter(arrow_mask(rows_with_keys_in(self.rows, rows, key_names)))
        return found.select(rows.schema.names) if found.num_rows else None


ReadPositioned = Callable[[DataFileMeta], pa.Table]


def lookup_older_versions(
    level0: Sequence[DataFileMeta],
    others: Sequence[DataFileMeta],
    *,
    read_positioned: ReadPositioned,
    read_whole: Callable[[DataFileMeta], pa.Table],
    key_names: Sequence[str],
    keep_rows: bool,
) -> LookupResult:
    """Look the keys of the ``level0`` files up in ``others`` (read with their vectors applied):
    Paimon's lookup of each level-0 key from the output level + 1 upwards. ``read_positioned``
    gives a file's live key columns with their positions, ``read_whole`` all of its rows."""
    if not level0 or not others:
        return LookupResult({}, None)
    keys = pa.concat_tables([read_positioned(f).select(list(key_names)) for f in level0])
    deletions: dict[str, np.ndarray] = {}
    found: list[pa.Table] = []
    for f in others:
        rows = read_positioned(f)  # key columns only: most lookups need no values
        older = rows_with_keys_in(rows, keys, key_names)
        if not older.any():
            continue
        positions = np.sort(as_numpy(rows.column(POSITION))[older])
        deletions[f.file_name] = positions
        if keep_rows:
            found.append(read_whole(f).take(indices(positions)))
    rows_found = pa.concat_tables(found) if keep_rows and found else None
    return LookupResult(deletions, rows_found)


def with_positions(table: pa.Table, positions: np.ndarray | None) -> pa.Table:
    """A whole file's rows (or some of its columns) with their positions, the deleted ones removed."""
    numbered = table.append_column(POSITION, from_numpy(np.arange(table.num_rows, dtype=np.int64)))
    return apply_vector(numbered, positions)


def apply_compaction(maintainer: DeletionVectorsMaintainer, result: CompactResult, lookup: LookupResult) -> None:
    """Rewritten files drop their vectors (upgraded ones keep theirs, under the same name); the
    older versions the lookup found are marked deleted."""
    kept = {f.file_name for f in result.after}
    for f in result.before:
        if f.file_name not in kept:
            maintainer.remove(f.file_name)
    for file_name, positions in lookup.deletions.items():
        maintainer.delete(file_name, positions)


def vectors_of(
    maintainer: DeletionVectorsMaintainer | None, override: Mapping[str, np.ndarray] | None, file_name: str
) -> np.ndarray | None:
    if override is not None:
        return override.get(file_name)
    return maintainer.vector(file_name) if maintainer is not None else None


def index_file_meta(f: IndexFile, vectors: Mapping[str, np.ndarray] | None = None) -> IndexFileMeta:
    """An index file as commit messages carry it (with each vector's cardinality when known)."""
    ranges = tuple(
        DeletionVectorRange(name, offset, length, len(vectors[name]) if vectors is not None and name in vectors else None)
        for name, offset, length in f.ranges
    )
    return IndexFileMeta(DELETION_VECTORS_INDEX, f.file_name, f.file_size, f.row_count, ranges)
