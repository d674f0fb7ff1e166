"""The LSM shape of one (partition, bucket): files per level, and its sorted runs.

Level 0 holds one sorted run per file (newest first); every level >= 1 is one sorted run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lakestore.meta.manifest import DataFileMeta


@dataclass(frozen=True)
class LevelSortedRun:
    level: int
    files: tuple[DataFileMeta, ...]

    @property
    def total_size(self) -> int:
        return sum(f.file_size for f in self.files)


@dataclass(frozen=True)
class Levels:
    num_levels: int
    files: tuple[DataFileMeta, ...]

    @classmethod
    def of(cls, files: Iterable[DataFileMeta], num_levels: int) -> Levels:
        files = tuple(files)
        highest = max((f.level for f in files), default=0)
        return cls(max(num_levels, highest + 1), files)

    @property
    def max_level(self) -> int:
        return self.num_levels - 1

    def level0(self) -> list[DataFileMeta]:
        # Paimon orders level 0 by max sequence number, newest first.
        return sorted((f for f in self.files if f.level == 0), key=lambda f: (-f.max_sequence_number, -f.min_sequence_number, f.file_name))

    def level(self, level: int) -> list[DataFileMeta]:
        return [f for f in self.files if f.level == level]

    def sorted_runs(self) -> list[LevelSortedRun]:
        runs = [LevelSortedRun(0, (f,)) for f in self.level0()]
        for level in range(1, self.num_levels):
            files = self.level(level)
            if files:
                runs.append(LevelSortedRun(level, tuple(files)))
        return runs

    @property
    def number_of_sorted_runs(self) -> int:
        return len(self.sorted_runs())

    def non_empty_highest_level(self) -> int:
        return max((f.level for f in self.files), default=-1)
