"""Small-file compaction of append tables (per bucket; bucket-unaware tables use bucket 0):
consecutive small files, in sequence order, are concatenated into files of the target size."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

from lakestore.meta.commit_message import CompactResult
from lakestore.meta.manifest import FILE_SOURCE_COMPACT, DataFileMeta
from lakestore.write.file_writer import DataFileWriter


def pick_append_files(
    files: Sequence[DataFileMeta], *, small_file_size: int, min_file_num: int, max_file_num: int, full: bool
) -> list[DataFileMeta]:
    ordered = sorted(files, key=lambda f: f.min_sequence_number)
    small = [f for f in ordered if f.file_size < small_file_size]
    if full:
        return small if len(small) > 1 else []
    if len(small) < min_file_num:
        return []
    return small[:max_file_num]


def compact_append(
    files: Sequence[DataFileMeta], *, read_file: Callable[[DataFileMeta], pa.Table], writer: DataFileWriter
) -> CompactResult:
    result = CompactResult()
    if len(files) < 2:
        return result
    rows = pa.concat_tables([read_file(f) for f in files])
    first = min(f.min_sequence_number for f in files)
    result.before.extend(files)
    result.after.extend(writer.write_append(rows, first_sequence=first, file_source=FILE_SOURCE_COMPACT))
    return result
