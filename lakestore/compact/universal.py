"""Universal compaction (RocksDB-style, as Paimon's UniversalCompaction): pick which sorted runs
of a bucket to merge and the level to write them to."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lakestore.compact.levels import LevelSortedRun
from lakestore.meta.manifest import DataFileMeta


@dataclass(frozen=True)
class CompactUnit:
    output_level: int
    runs: tuple[LevelSortedRun, ...]
    # Paimon's FileRewriteCompactTask: each file rewritten on its own to the output level (a full
    # compaction of a bucket that is already one top-level run)
    file_rewrite: bool = False

    @property
    def files(self) -> list[DataFileMeta]:
        return [f for r in self.runs for f in r.files]


@dataclass(frozen=True)
class UniversalCompaction:
    max_size_amplification_percent: int
    size_ratio: int
    num_run_compaction_trigger: int
    # compaction.total-size-threshold (Paimon's EarlyFullCompaction): a bucket of several sorted
    # runs smaller than this in total is compacted fully
    total_size_threshold: int | None = None

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        max_level = num_levels - 1
        if self.total_size_threshold is not None and len(runs) > 1 and sum(r.total_size for r in runs) < self.total_size_threshold:
            return CompactUnit(max_level, tuple(runs))
        unit = self._pick_for_size_amp(max_level, runs)
        if unit is not None:
            return unit
        unit = self._pick_for_size_ratio(max_level, runs)
        if unit is not None:
            return unit
        if len(runs) > self.num_run_compaction_trigger:
            candidate_count = len(runs) - self.num_run_compaction_trigger + 1
            return self.pick_for_size_ratio(max_level, runs, candidate_count)
        return None

    def _pick_for_size_amp(self, max_level: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        if len(runs) < self.num_run_compaction_trigger:
            return None
        candidate_size = sum(r.total_size for r in runs[:-1])
        earliest_size = runs[-1].total_size
        if candidate_size * 100 > self.max_size_amplification_percent * earliest_size:
            return CompactUnit(max_level, tuple(runs))
        return None

    def _pick_for_size_ratio(self, max_level: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        if len(runs) < self.num_run_compaction_trigger:
            return None
        return self.pick_for_size_ratio(max_level, runs, 1)

    def pick_for_size_ratio(
        self, max_level: int, runs: Sequence[LevelSortedRun], candidate_count: int, force_pick: bool = False
    ) -> CompactUnit | None:
        candidate_size = sum(r.total_size for r in runs[:candidate_count])
        for i in range(candidate_count, len(runs)):
            following = runs[i]
            if candidate_size * (100.0 + self.size_ratio) / 100.0 < following.total_size:
                break
            candidate_size += following.total_size
            candidate_count += 1
        if force_pick or candidate_count > 1:
            return self._create_unit(runs, max_level, candidate_count)
        return None

    @staticmethod
    def _create_unit(runs: Sequence[LevelSortedRun], max_level: int, run_count: int) -> CompactUnit:
        output_level = max_level if run_count == len(runs) else max(0, runs[run_count].level - 1)
        if output_level == 0:
            # Never write level 0: extend the unit to the next run on a level >= 1.
            for i in range(run_count, len(runs)):
                following = runs[i]
                run_count += 1
                if following.level != 0:
                    output_level = following.level
                    break
        if run_count == len(runs):
            output_level = max_level
        return CompactUnit(output_level, tuple(runs[:run_count]))


def pick_full_compaction(
    num_levels: int,
    runs: Sequence[LevelSortedRun],
    *,
    force_rewrite_all: bool = False,
    has_vector: Callable[[DataFileMeta], bool] | None = None,
    expired: Callable[[DataFileMeta], bool] | None = None,
) -> CompactUnit | None:
    """Paimon's CompactStrategy.pickFullCompaction: every run merged to the top level; a bucket
    that is one top-level run already rewrites, file by file, every file with
    ``compaction.force-rewrite-all-files``, else the files that hold expired records
    (``record-level.expire-time``) or have a deletion vector."""
    max_level = num_levels - 1
    if not runs:
        return None
    if len(runs) == 1 and runs[0].level == max_level:
        picked = tuple(
            f
            for f in runs[0].files
            if force_rewrite_all or (expired is not None and expired(f)) or (has_vector is not None and has_vector(f))
        )
        if not picked:
            return None
        return CompactUnit(max_level, (LevelSortedRun(max_level, picked),), file_rewrite=True)
    return CompactUnit(max_level, tuple(runs))


def pick_force_up_level0(picker: UniversalCompaction, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
    """Paimon's ForceUpLevel0Compaction, for tables whose readers skip level 0 (first-row): the
    universal pick, else every level-0 run merged upwards (with as many following runs as the
    size ratio takes), so that a commit never leaves its rows invisible."""
    unit = picker.pick(num_levels, runs)
    if unit is not None:
        return unit
    level0_runs = 0
    for run in runs:
        if run.level > 0:
            break
        level0_runs += 1
    if level0_runs == 0:
        return None
    if level0_runs < len(runs) and runs[level0_runs].level == 1:
        # level 1 is merged with level 0 (Paimon 2.0), so that the size ratio against level 2
        # counts both, and level 0 never lands on a level holding older rows below it
        level0_runs += 1
    return picker.pick_for_size_ratio(num_levels - 1, runs, level0_runs, force_pick=True)
