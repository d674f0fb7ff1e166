"""Deletion vectors on read (``deletion-vectors.enabled``): which rows of each data file are
deleted, as Paimon 0.9 records them.

A snapshot's index manifest lists, per (partition, bucket), index files of type
``DELETION_VECTORS`` under ``index/``; each holds one vector per data file with deleted rows.
Readers of such tables never merge: they read the files on levels >= 1, each with its vector
applied (Paimon's ``ApplyDeletionVectorReader``), because the writers' lookup compaction keeps
one live row per key there.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import fastavro
import numpy as np
import pyarrow as pa

from lakestore.errors import CorruptMetadataError
from lakestore.format.deletion_vector import DELETION_VECTORS_INDEX, decode_vector, deletion_mask
from lakestore.io.fileio import FileIO
from lakestore.meta.snapshot import Snapshot

ADD = 0


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
    return f"{table_path}/index"


def read_index_files(file_io: FileIO, table_path: str, snapshot: Snapshot | None) -> list[IndexFile]:
    """The live deletion-vector index files of ``snapshot`` (its index manifest lists only live
    files: each commit writes the whole list)."""
    if snapshot is None or not snapshot.index_manifest:
        return []
    path = f"{table_path}/manifest/{snapshot.index_manifest}"
    try:
        records = list(fastavro.reader(io.BytesIO(file_io.read_bytes(path))))
    except FileNotFoundError as exc:
        raise CorruptMetadataError(path, "index manifest referenced by the snapshot is missing") from exc
    except Exception as exc:  # fastavro raises many types on garbage input
        raise CorruptMetadataError(path, repr(exc)) from exc
    live: dict[str, IndexFile] = {}
    for raw in records:
        rec = cast(dict[str, Any], raw)
        if rec["_INDEX_TYPE"] != DELETION_VECTORS_INDEX:
            continue
        if rec["_KIND"] != ADD:
            live.pop(rec["_FILE_NAME"], None)
            continue
        ranges = tuple((r["f0"], int(r["f1"]), int(r["f2"])) for r in rec.get("_DELETIONS_VECTORS_RANGES") or () if r is not None)
        live[rec["_FILE_NAME"]] = IndexFile(
            rec["_PARTITION"], rec["_BUCKET"], rec["_FILE_NAME"], rec["_FILE_SIZE"], rec["_ROW_COUNT"], ranges
        )
    return list(live.values())


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
    return table.filter(pa.array(~deletion_mask(positions, table.num_rows)))
