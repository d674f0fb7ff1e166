"""Fake DataFileMeta and LevelSortedRun builders for picker / partition tests (no files on disk)."""

from __future__ import annotations

from lakestore.compact.levels import LevelSortedRun
from lakestore.format.binary_row import encode_values
from lakestore.format.types import parse_type
from lakestore.meta.manifest import DataFileMeta, SimpleStats

INT = parse_type("INT")
EMPTY = SimpleStats(b"", b"", None)


def file(
    size: int, *, level: int = 0, name: str = "", min_key: int = 0, max_key: int = 0, seq: int = 0, deletes: int | None = 0
) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=size,
        row_count=1,
        min_key=encode_values([INT], [min_key]),
        max_key=encode_values([INT], [max_key]),
        key_stats=EMPTY,
        value_stats=EMPTY,
        min_sequence_number=seq,
        max_sequence_number=seq,
        schema_id=0,
        level=level,
        delete_row_count=deletes,
    )


def level(lvl: int, size: int) -> LevelSortedRun:
    return LevelSortedRun(lvl, (file(size, level=lvl),))


def level0(*sizes: int) -> list[LevelSortedRun]:
    return [level(0, s) for s in sizes]


def sizes_of(unit) -> list[int]:
    return [f.file_size for f in unit.files]
