"""Dynamic bucket mode (``bucket = -1`` with a primary key, Paimon's default for primary-key tables).

A key's bucket is not a function of the key: Paimon assigns each new key (by the hash of its
trimmed primary key, the same hash fixed buckets use) to a bucket that holds fewer than
``dynamic-bucket.target-row-num`` keys, and remembers the choice in the bucket's ``HASH`` index
file. Keys already in the index keep their bucket, so an upsert always reaches the bucket holding
the older version. This module does both halves as Paimon 0.9 does:

- ``HashBucketAssigner`` (Paimon's ``HashBucketAssigner``/``PartitionIndex``): per partition, the
  hash -> bucket map loaded from the index files, the key counts of the assigner's own buckets,
  and the fill order: a new key goes to the first non-full bucket in the order Java's ``HashMap``
  iterates them, else to the lowest unused bucket the assigner owns. With several assigners
  (distributed writes), assigner ``i`` of ``n`` handles the keys whose ``computeAssigner`` is
  ``i`` and owns buckets ``b % n == i``.
- ``HashIndexMaintainer`` (Paimon's ``HashIndexMaintainer``): per (partition, bucket) written,
  the bucket's key hashes; when new keys arrived, a new index file with the whole set replaces
  the old one at commit.

Everything is vectorised over the batch's hashes: the per-row work is NumPy ``unique``,
``searchsorted`` and ``repeat``; Python loops run per partition and per bucket filled.
"""

from __future__ import annotations

import dataclasses
import itertools
import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.errors import OptionError
from lakestore.format.arrow_ops import sorted_unique
from lakestore.format.binary_row import BinaryRows, encode_rows
from lakestore.format.bucket import hash_rows
from lakestore.format.hash_index import HASH_INDEX, decode_hash_index, encode_hash_index
from lakestore.io.fileio import FileIO
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.index_manifest import IndexFileMeta, IndexManifestEntry, index_file_path
from lakestore.meta.schema import TableSchema
from lakestore.write.input import PartitionSpec, partition_groups

# Paimon stores a key's bucket as a Java short
MAX_BUCKETS = 32767


def key_hashes(schema: TableSchema, rows: pa.Table) -> np.ndarray:
    """Java ``BinaryRow.hashCode()`` of every row's trimmed primary key (int32)."""
    keys = schema.trimmed_primary_keys
    arrays = [rows.column(k).combine_chunks() for k in keys]
    return hash_rows(encode_rows(schema.types_of(keys), arrays, num_rows=rows.num_rows))


def partition_hash(partition: bytes) -> int:
    """Java ``BinaryRow.hashCode()`` of a serialized partition row (arity prefix, then the row)."""
    (arity,) = struct.unpack(">i", partition[:4])
    body = np.frombuffer(partition[4:], dtype=np.uint8)
    rows = BinaryRows(arity, body.reshape(1, -1), np.array([len(body)], dtype=np.int64))
    return int(hash_rows(rows)[0])


def _java_mod(values: np.ndarray | int, divisor: int) -> np.ndarray:
    return np.fmod(np.asarray(values, dtype=np.int64), divisor)


def assigner_ids(partition_hash_value: int, hashes: np.ndarray, *, num_channels: int, num_assigners: int) -> np.ndarray:
    """Paimon's ``BucketAssigner.computeAssigner``: which of ``num_channels`` assigners owns each key."""
    start = abs(int(_java_mod(partition_hash_value, num_channels)))
    return (start + np.abs(_java_mod(hashes, num_assigners))) % num_channels


def unique_hashes(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted distinct hashes, index of each one's first occurrence, each hash's position in the
    distinct ones): ``np.unique`` with ``return_index``/``return_inverse``, through a stable sort
    of int32 (several times faster than NumPy 2.3+'s hash-based ``np.unique`` here)."""
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    starts = np.ones(len(ordered), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(hashes), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], order[starts], inverse


def _java_hashmap_order(keys: Sequence[int]) -> list[int]:
    """The iteration order of a ``java.util.HashMap<Integer, ...>`` filled with ``keys`` in this
    order: by table slot (the capacity grows from 16 by doubling past a 0.75 load), then by
    insertion (a slot's chain keeps it)."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    slot = {k: ((k ^ (k >> 16)) & (capacity - 1)) for k in keys}
    return sorted(keys, key=lambda k: slot[k])  # sorted() is stable: insertion order breaks ties


@dataclass
class PartitionIndex:
    """One partition's key hash -> bucket map (``hashes`` sorted, ``buckets`` aligned) and the
    key counts of the assigner's buckets, with the non-full ones in fill order."""

    hashes: np.ndarray
    buckets: np.ndarray
    counts: dict[int, int]
    non_full: list[int]
    used: set[int] = field(default_factory=set)

    @classmethod
    def empty(cls) -> PartitionIndex:
        return cls(np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), {}, [], set())


class HashBucketAssigner:
    """Assigns buckets to keys of a dynamic-bucket table from the index of ``entries`` (the base
    snapshot's index manifest; none for an overwrite, which starts the index afresh)."""

    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        entries: Sequence[IndexManifestEntry],
        *,
        target_row_num: int,
        num_assigners: int = 1,
        assign_id: int = 0,
    ) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.target_row_num = target_row_num
        self.num_assigners = num_assigners
        self.assign_id = assign_id
        self._entries = [e for e in entries if e.index_file.index_type == HASH_INDEX]
        self._partitions: dict[bytes, PartitionIndex] = {}

    def _mine(self, bucket: int) -> bool:
        return bucket % self.num_assigners == self.assign_id % self.num_assigners

    def _load(self, partition: bytes) -> PartitionIndex:
        hash_parts: list[np.ndarray] = []
        bucket_parts: list[np.ndarray] = []
        counts: dict[int, int] = {}
        phash = partition_hash(partition) if self.num_assigners > 1 else 0
        for entry in self._entries:
            if entry.partition != partition:
                continue
            hashes = read_hash_index(self.file_io, self.table_path, entry.index_file)
            if self.num_assigners > 1:
                # only this assigner's keys are looked up here; the others' go to their assigners
                ids = assigner_ids(phash, hashes, num_channels=self.num_assigners, num_assigners=self.num_assigners)
                kept = hashes[ids == self.assign_id]
            else:
                kept = hashes
            hash_parts.append(kept)
            bucket_parts.append(np.full(len(kept), entry.bucket, dtype=np.int32))
            if self._mine(entry.bucket) and len(hashes):
                counts[entry.bucket] = counts.get(entry.bucket, 0) + len(hashes)
        if not hash_parts:
            return PartitionIndex.empty()
        hashes = np.concatenate(hash_parts)
        buckets = np.concatenate(bucket_parts)
        # a hash listed by two buckets: the later file wins, as Java's map builder keeps the last put
        distinct, first_from_end, _ = unique_hashes(np.ascontiguousarray(hashes[::-1]))
        chosen = len(hashes) - 1 - first_from_end
        index = PartitionIndex(distinct.astype(np.int32), buckets[chosen], counts, [], set(counts))
        index.non_full = [b for b in _java_hashmap_order(list(counts)) if counts[b] < self.target_row_num]
        return index

    def assign(self, partition: bytes, hashes: np.ndarray) -> np.ndarray:
        """The bucket of each key hash (in arrival order: new keys fill buckets in that order)."""
        index = self._partitions.get(partition)
        if index is None:
            index = self._partitions[partition] = self._load(partition)
        unique, first, inverse = unique_hashes(np.asarray(hashes, dtype=np.int32))
        result = np.empty(len(unique), dtype=np.int32)
        position = np.searchsorted(index.hashes, unique)
        clipped = np.minimum(position, max(len(index.hashes) - 1, 0))
        known = (position < len(index.hashes)) & (index.hashes[clipped] == unique) if len(index.hashes) else np.zeros(len(unique), bool)
        result[known] = index.buckets[clipped[known]]
        new = np.flatnonzero(~known)
        if len(new):
            new = new[np.argsort(first[new], kind="stable")]  # arrival order
            result[new] = self._fill(index, len(new))
            merged_hashes = np.concatenate([index.hashes, unique[new]])
            merged_buckets = np.concatenate([index.buckets, result[new]])
            order = np.argsort(merged_hashes, kind="stable")
            index.hashes, index.buckets = merged_hashes[order], merged_buckets[order]
        return result[inverse]

    def _fill(self, index: PartitionIndex, count: int) -> np.ndarray:
        """Buckets for ``count`` new keys: the non-full buckets in order, then new buckets."""
        taken: list[tuple[int, int]] = []
        remaining = count
        while remaining and index.non_full:
            bucket = index.non_full[0]
            room = self.target_row_num - index.counts[bucket]
            take = min(room, remaining)
            if take > 0:
                taken.append((bucket, take))
                index.counts[bucket] += take
                remaining -= take
            if index.counts[bucket] >= self.target_row_num:
                index.non_full.pop(0)
        candidate = 0
        while remaining:
            while candidate <= MAX_BUCKETS and (candidate in index.used or not self._mine(candidate)):
                candidate += 1
            if candidate > MAX_BUCKETS:
                raise OptionError(
                    f"dynamic bucket mode ran out of buckets ({MAX_BUCKETS}): raise 'dynamic-bucket.target-row-num' "
                    f"(now {self.target_row_num})"
                )
            take = min(self.target_row_num, remaining)
            taken.append((candidate, take))
            index.used.add(candidate)
            index.counts[candidate] = take
            if take < self.target_row_num:
                index.non_full.append(candidate)
            remaining -= take
        buckets = np.array([b for b, _ in taken], dtype=np.int32)
        return np.repeat(buckets, [n for _, n in taken])


def read_hash_index(file_io: FileIO, table_path: str, meta: IndexFileMeta) -> np.ndarray:
    path = index_file_path(table_path, meta.file_name)
    return decode_hash_index(file_io.read_bytes(path), path=path, row_count=meta.row_count)


class IndexFileNames:
    """Names of the index files one write creates (``index-<uuid>-<n>``, as Paimon names them)."""

    def __init__(self) -> None:
        self._prefix = f"index-{uuid.uuid4()}"
        self._counter = itertools.count()

    def next(self) -> str:
        return f"{self._prefix}-{next(self._counter)}"


class HashIndexMaintainer:
    """The key hashes of one (partition, bucket), restored from its index file in the base
    snapshot; ``prepare_commit`` writes the whole set anew when keys were added."""

    def __init__(self, file_io: FileIO, table_path: str, restored: IndexFileMeta | None, names: IndexFileNames) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self._names = names
        self._base = restored
        restored_hashes = read_hash_index(file_io, table_path, restored) if restored is not None else np.zeros(0, np.int32)
        self._hashes = sorted_unique(restored_hashes)  # sorted, for searchsorted
        self._pending: list[np.ndarray] = []
        self.written: list[str] = []

    def add(self, hashes: np.ndarray) -> None:
        self._pending.append(np.asarray(hashes, dtype=np.int32))

    def prepare_commit(self) -> tuple[tuple[IndexFileMeta, ...], tuple[IndexFileMeta, ...]]:
        """(new index files, retired index files) of this bucket; empty when no key is new."""
        if not self._pending:
            return (), ()
        pending = sorted_unique(np.concatenate(self._pending))
        self._pending = []
        position = np.minimum(np.searchsorted(self._hashes, pending), max(len(self._hashes) - 1, 0))
        known = (self._hashes[position] == pending) if len(self._hashes) else np.zeros(len(pending), dtype=bool)
        if known.all():
            return (), ()
        merged = np.sort(np.concatenate([self._hashes, pending[~known]]), kind="stable")
        data = encode_hash_index(merged)
        name = self._names.next()
        self.file_io.write_bytes(index_file_path(self.table_path, name), data, overwrite=False)
        self.written.append(name)
        meta = IndexFileMeta(HASH_INDEX, name, len(data), len(merged))
        # Retiring the file this set was restored from makes a concurrent writer of the same
        # bucket's index a commit conflict instead of a silently lost hash.
        retired = (self._base,) if self._base is not None else ()
        self._hashes, self._base = merged, meta
        return (meta,), retired

    def delete_written(self) -> None:
        for name in self.written:
            self.file_io.delete(index_file_path(self.table_path, name))
        self.written.clear()


class DynamicBuckets:
    """Dynamic bucket mode of one write: the bucket assigner and the hash index of every bucket
    written."""

    def __init__(self, file_io: FileIO, table_path: str, schema: TableSchema, index: list[IndexManifestEntry], *, fresh: bool) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.schema = schema
        # an overwrite starts the overwritten partitions' index afresh (their files all go)
        self._index = [] if fresh else [e for e in index if e.index_file.index_type == HASH_INDEX]
        self.assigner = HashBucketAssigner(
            file_io, table_path, self._index, target_row_num=schema.core_options().dynamic_bucket_target_row_num
        )
        self._names = IndexFileNames()
        self._maintainers: dict[tuple[bytes, int], HashIndexMaintainer] = {}

    def assign(self, rows: pa.Table, hashes: np.ndarray, partition: Callable[[tuple[Any, ...]], PartitionSpec]) -> np.ndarray:
        """The bucket of every row; ``partition`` resolves (and checks) a partition's values."""
        buckets = np.empty(rows.num_rows, dtype=np.int32)
        # positions stay in arrival order: it decides which new keys fill a bucket first
        for values, positions in partition_groups(rows, self.schema.partition_keys):
            buckets[positions] = self.assigner.assign(partition(values).binary, hashes[positions])
        return buckets

    def maintainer(self, partition: bytes, bucket: int) -> HashIndexMaintainer:
        found = self._maintainers.get((partition, bucket))
        if found is None:
            restored = next((e.index_file for e in self._index if e.partition == partition and e.bucket == bucket), None)
            found = self._maintainers[(partition, bucket)] = HashIndexMaintainer(self.file_io, self.table_path, restored, self._names)
        return found

    def attach_index_files(self, messages: list[CommitMessage]) -> list[CommitMessage]:
        """Each bucket's message carries its new hash index file (and the file it replaces)."""
        out = []
        for m in messages:
            maintainer = self._maintainers.get((m.partition, m.bucket))
            if maintainer is not None:
                new, retired = maintainer.prepare_commit()
                m = dataclasses.replace(m, new_index_files=m.new_index_files + new, deleted_index_files=m.deleted_index_files + retired)
            out.append(m)
        return out

    def delete_written(self) -> None:
        for maintainer in self._maintainers.values():
            maintainer.delete_written()
