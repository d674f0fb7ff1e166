"""Small-file compaction of append tables (per bucket; bucket-unaware tables use bucket 0):
consecutive small files, in sequence order, are concatenated into files of the target size."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

from lakestore.meta.commit_message import CompactResult
from lakestore.meta.manifest import FILE_SOURCE_COMPACT, DataFileMeta
from lakestore.write.file_writer import DataFileWriter


def pick_append_files(
    files: Sequence[DataFileMeta],
    *,
    small_file_size: int,
    min_file_num: int,
    max_file_num: int,
    full: bool,
    force_rewrite_all: bool = False,
    deleted_rows: Callable[[DataFileMeta], int | None] | None = None,
    delete_ratio_threshold: float = 0.2,
) -> list[DataFileMeta]:
    """The files to concatenate. ``force_rewrite_all`` (a full compaction with
    ``compaction.force-rewrite-all-files``): every file. ``deleted_rows``: a file's deleted-row
    count by its deletion vector (None: it has none); a file whose vector deletes more than
    ``delete_ratio_threshold`` of its rows is compacted whatever its size (Paimon's
    AppendCompactCoordinator, ``compaction.delete-ratio-threshold``)."""
    ordered = sorted(files, key=lambda f: f.min_sequence_number)
    if force_rewrite_all:
        return ordered
    small = [
        f
        for f in ordered
        if f.file_size < small_file_size or (deleted_rows is not None and too_many_deleted(f, deleted_rows(f), delete_ratio_threshold))
    ]
    if full:
        return small if len(small) > 1 else []
    if len(small) < min_file_num:
        return []
    return small[:max_file_num]


def too_many_deleted(f: DataFileMeta, deleted: int | None, threshold: float) -> bool:
    """Whether a file's deletion vector (``deleted`` rows; None: no vector) deletes more than
    ``threshold`` of its rows."""
    return deleted is not None and deleted > f.row_count * threshold


def compact_append(
    files: Sequence[DataFileMeta],
    *,
    read_file: Callable[[DataFileMeta], pa.Table],
    writer: DataFileWriter,
    rewrite_single: bool = False,
) -> CompactResult:
    """Concatenate ``files`` (at least two, or one with ``rewrite_single``) into new files."""
    result = CompactResult()
    if len(files) < (1 if rewrite_single else 2):
        return result
    rows = pa.concat_tables([read_file(f) for f in files])
    first = min(f.min_sequence_number for f in files)
    result.before.extend(files)
    result.after.extend(writer.write_append(rows, first_sequence=first, file_source=FILE_SOURCE_COMPACT))
    return result
