"""Deletion vectors on read (``deletion-vectors.enabled``): which rows of each data file are
deleted, as Paimon 0.9 records them.

A snapshot's index manifest lists, per (partition, bucket), index files of type
``DELETION_VECTORS`` under ``index/``; each holds one vector per data file with deleted rows.
Readers of such tables never merge: they read the files on levels >= 1, each with its vector
applied (Paimon's ``ApplyDeletionVectorReader``), because the writers' lookup compaction keeps
one live row per key there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from lakestore.errors import CorruptMetadataError
from lakestore.format.arrow_ops import mask as arrow_mask
from lakestore.format.deletion_vector import decode_vector, deletion_mask
from lakestore.io.fileio import FileIO
from lakestore.meta.index_manifest import ADD, DELETION_VECTORS_INDEX, INDEX_DIR, read_index_manifest
from lakestore.meta.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class DeletionFile:
    """Where one data file's vector is: ``index_file`` (a name under ``index/``), the offset of
    its size int and its length (Paimon's ``DeletionFile``)."""

    index_file: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One deletion-vector index file of a (partition, bucket) and the vectors it holds."""

    partition: bytes
    bucket: int
    file_name: str
    file_size: int
    row_count: int
    ranges: tuple[tuple[str, int, int], ...]  # (data file, offset, length)


BucketKey = tuple[bytes, int]


def index_dir(table_path: str) -> str:
    return f"{table_path}/{INDEX_DIR}"


def read_index_files(file_io: FileIO, table_path: str, snapshot: Snapshot | None) -> list[IndexFile]:
    """The live deletion-vector index files of ``snapshot`` (its index manifest lists only live
    files: each commit writes the whole list)."""
    if snapshot is None or not snapshot.index_manifest:
        return []
    return [
        IndexFile(
            e.partition,
            e.bucket,
            e.index_file.file_name,
            e.index_file.file_size,
            e.index_file.row_count,
            tuple((r.data_file, r.offset, r.length) for r in e.index_file.dv_ranges or ()),
        )
        for e in read_index_manifest(file_io, table_path, snapshot.index_manifest)
        if e.kind == ADD and e.index_file.index_type == DELETION_VECTORS_INDEX
    ]


def deletion_files(index_files: Iterable[IndexFile]) -> dict[BucketKey, dict[str, DeletionFile]]:
    """(partition, bucket) -> data file name -> where its vector is."""
    out: dict[BucketKey, dict[str, DeletionFile]] = {}
    for f in index_files:
        bucket = out.setdefault((f.partition, f.bucket), {})
        for data_file, offset, length in f.ranges:
            bucket[data_file] = DeletionFile(f.file_name, offset, length)
    return out


def read_vectors(file_io: FileIO, table_path: str, files: Mapping[str, DeletionFile]) -> dict[str, np.ndarray]:
    """Data file name -> sorted deleted positions, reading each index file once."""
    by_index: dict[str, list[tuple[str, DeletionFile]]] = {}
    for data_file, deletion in files.items():
        by_index.setdefault(deletion.index_file, []).append((data_file, deletion))
    out: dict[str, np.ndarray] = {}
    for index_file, entries in by_index.items():
        path = f"{index_dir(table_path)}/{index_file}"
        try:
            data = file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise CorruptMetadataError(path, "deletion vector index file referenced by the snapshot is missing") from exc
        for data_file, deletion in entries:
            out[data_file] = decode_vector(data, deletion.offset, deletion.length, source=path)
    return out


def apply_vector(table: pa.Table, positions: np.ndarray | None) -> pa.Table:
    """The rows of one whole data file (in file order) whose positions are not deleted."""
    if positions is None or not len(positions):
        return table
    return table.filter(arrow_mask(~deletion_mask(positions, table.num_rows)))
