"""Deletion vectors on read (``deletion-vectors.enabled``): which rows of each data file are
deleted, as Paimon 0.9 records them.

A snapshot's index manifest lists, per (partition, bucket), index files of type
``DELETION_VECTORS`` under ``index/`` (or at their ``_EXTERNAL_PATH``); each holds one vector per
data file with deleted rows, 32-bit or 64-bit (``deletion-vectors.bitmap64``), told apart by its
magic number.
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
from lakestore.format.deletion_vector import deletion_mask, read_vector
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
    external_path: str | None = None  # the index file's absolute path, when not under index/


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One deletion-vector index file of a (partition, bucket) and the vectors it holds."""

    partition: bytes
    bucket: int
    file_name: str
    file_size: int
    row_count: int
    ranges: tuple[tuple[str, int, int], ...]  # (data file, offset, length)
    external_path: str | None = None


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
            e.index_file.external_path,
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
            bucket[data_file] = DeletionFile(f.file_name, offset, length, external_path=f.external_path)
    return out


def read_vectors(file_io: FileIO, table_path: str, files: Mapping[str, DeletionFile]) -> dict[str, np.ndarray]:
    """Data file name -> sorted deleted positions, reading each index file once."""
    return {name: positions for name, (positions, _) in read_vectors_and_kinds(file_io, table_path, files).items()}


def read_vectors_and_kinds(file_io: FileIO, table_path: str, files: Mapping[str, DeletionFile]) -> dict[str, tuple[np.ndarray, bool]]:
    """Data file name -> (sorted deleted positions, whether the vector is 64-bit)."""
    by_index: dict[str, list[tuple[str, DeletionFile]]] = {}
    for data_file, deletion in files.items():
        by_index.setdefault(deletion.external_path or f"{index_dir(table_path)}/{deletion.index_file}", []).append((data_file, deletion))
    out: dict[str, tuple[np.ndarray, bool]] = {}
    for path, entries in by_index.items():
        try:
            data = file_io.read_bytes(path)
        except FileNotFoundError as exc:
            raise CorruptMetadataError(path, "deletion vector index file referenced by the snapshot is missing") from exc
        for data_file, deletion in entries:
            out[data_file] = read_vector(data, deletion.offset, deletion.length, source=path)
    return out


def apply_vector(table: pa.Table, positions: np.ndarray | None) -> pa.Table:
    """The rows of one whole data file (in file order) whose positions are not deleted."""
    if positions is None or not len(positions):
        return table
    return table.filter(arrow_mask(~deletion_mask(positions, table.num_rows)))
