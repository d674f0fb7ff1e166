"""The LSM shape of a primary-key table from its scan plan: files and rows per level of each
(partition, bucket), and the number of sorted runs the compaction triggers count.

Paimon counts every level-0 file as one sorted run and every non-empty level >= 1 as one run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import lakestore


@dataclass(frozen=True)
class LevelShape:
    level: int
    files: int
    rows: int
    bytes: int


@dataclass(frozen=True)
class BucketShape:
    partition: str  # "dt=1995-01-01" ("" for unpartitioned tables)
    partition_values: tuple
    bucket: int
    levels: tuple[LevelShape, ...]

    @property
    def sorted_runs(self) -> int:
        return sum(lv.files if lv.level == 0 else 1 for lv in self.levels)

    @property
    def files(self) -> int:
        return sum(lv.files for lv in self.levels)

    @property
    def rows(self) -> int:
        return sum(lv.rows for lv in self.levels)


def partition_label(keys: Iterable[str], values: Iterable) -> str:
    return "/".join(f"{k}={v}" for k, v in zip(keys, values, strict=False))


def table_shape(
    table: lakestore.Table, *, snapshot_id: int | None = None, partitions: Iterable[str] | None = None, partition_key: str = "dt"
) -> list[BucketShape]:
    """Shape of every live (partition, bucket), optionally only the given ``partition_key`` values."""
    wanted = set(partitions) if partitions is not None else None
    predicate = lakestore.col(partition_key).isin(sorted(wanted)) if wanted is not None and partition_key in table.partition_keys else None
    shapes = []
    for split in table.scan(filter=predicate, snapshot_id=snapshot_id).plan():
        levels: dict[int, list] = {}
        for f in split.files:
            levels.setdefault(f.level, []).append(f)
        shapes.append(
            BucketShape(
                partition=partition_label(table.partition_keys, split.partition_values),
                partition_values=tuple(split.partition_values),
                bucket=split.bucket,
                levels=tuple(
                    LevelShape(level, len(fs), sum(f.row_count for f in fs), sum(f.file_size for f in fs))
                    for level, fs in sorted(levels.items())
                ),
            )
        )
    return shapes


def shape_markdown(shapes: list[BucketShape], *, limit: int = 200) -> str:
    """A markdown table (partition, bucket, level, files, rows, sorted runs) for the Dagster UI."""
    lines = ["| partition | bucket | level | files | rows | sorted runs |", "|---|---|---|---|---|---|"]
    count = 0
    for shape in shapes:
        for lv in shape.levels:
            if count >= limit:
                lines.append(f"| ... | | | | | ({sum(len(s.levels) for s in shapes) - limit} more rows) |")
                return "\n".join(lines)
            lines.append(f"| {shape.partition} | {shape.bucket} | {lv.level} | {lv.files} | {lv.rows} | {shape.sorted_runs} |")
            count += 1
    if count == 0:
        lines.append("| (no live files) | | | | | |")
    return "\n".join(lines)


def compaction_trigger(table: lakestore.Table) -> int:
    return table.options.compaction_trigger


def stop_trigger(table: lakestore.Table) -> int:
    return table.options.stop_trigger


def partitions_needing_compaction(table: lakestore.Table, *, snapshot_id: int | None = None) -> dict[str, int]:
    """``{partition value of dt: max sorted runs}`` for partitions with a bucket at or above the compaction trigger."""
    trigger = compaction_trigger(table)
    out: dict[str, int] = {}
    for shape in table_shape(table, snapshot_id=snapshot_id):
        if shape.sorted_runs >= trigger:
            value = str(shape.partition_values[0]) if shape.partition_values else ""
            out[value] = max(out.get(value, 0), shape.sorted_runs)
    return out
