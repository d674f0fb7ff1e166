"""Paimon's deterministic UniversalCompactionTest cases, translated one for one
(paimon-core/src/test/java/org/apache/paimon/mergetree/compact/UniversalCompactionTest.java).

Not ported: testOptimizedCompactionInterval / testForcePickL0 (time- and interval-driven
early full compaction) and testLookup (ForceUpLevel0Compaction for lookup changelog): lakestore
has neither option, so there is nothing to test.
"""

from __future__ import annotations

from lakestore.compact.levels import LevelSortedRun
from lakestore.compact.universal import UniversalCompaction, pick_full_compaction

from ._fakes import file, level, level0, sizes_of


def universal(max_size_amp: int, size_ratio: int, trigger: int) -> UniversalCompaction:
    return UniversalCompaction(max_size_amplification_percent=max_size_amp, size_ratio=size_ratio, num_run_compaction_trigger=trigger)


def create_levels(*levels: int) -> list[LevelSortedRun]:
    return [LevelSortedRun(lvl, (file(1, level=lvl),)) for lvl in levels]


def test_output_level():
    c = universal(25, 1, 3)
    runs = create_levels(0, 0, 1, 3, 4)
    assert c._create_unit(runs, 5, 1).output_level == 1
    assert c._create_unit(runs, 5, 2).output_level == 1
    assert c._create_unit(runs, 5, 3).output_level == 2
    assert c._create_unit(runs, 5, 4).output_level == 3
    assert c._create_unit(runs, 5, 5).output_level == 5


def test_pick():
    c = universal(25, 1, 3)
    # by size amplification
    pick = c.pick(3, level0(1, 2, 3, 3))
    assert pick is not None and sizes_of(pick) == [1, 2, 3, 3]
    # by size ratio
    pick = c.pick(4, [level(0, 1), level(1, 1), level(2, 1), level(3, 50)])
    assert pick is not None and sizes_of(pick) == [1, 1, 1]
    # by file num; 3 joins the candidate by size ratio after picking by file num
    pick = c.pick(4, [level(0, 1), level(1, 2), level(2, 3), level(3, 50)])
    assert pick is not None and sizes_of(pick) == [1, 2, 3]


def test_no_output_level0():
    c = universal(25, 1, 3)
    pick = c.pick(3, [level(0, 1), level(0, 1), level(1, 1), level(2, 50)])
    assert pick is not None and sizes_of(pick) == [1, 1, 1]
    pick = c.pick(3, [level(0, 1), level(0, 2), level(1, 3), level(2, 50)])
    assert pick is not None and sizes_of(pick) == [1, 2, 3]


def test_extreme_case_no_output_level0():
    c = universal(200, 1, 5)
    pick = c.pick(6, [level(0, 1), level(0, 1), level(0, 1), level(0, 1024), level(0, 1024 * 1024)])
    assert pick is not None
    assert sizes_of(pick) == [1, 1, 1, 1024, 1024 * 1024]
    assert pick.output_level == 5


def _add_size(sizes: list[int]) -> list[int]:
    return [1, *sizes]


def _append_and_pick_for_size_amp(c: UniversalCompaction, sizes: list[int]) -> list[int]:
    sizes = _add_size(sizes)
    unit = c._pick_for_size_amp(3, level0(*sizes))
    if unit is not None:
        return [sum(sizes_of(unit))]
    return sizes


def _pick_for_size_ratio(c: UniversalCompaction, sizes: list[int]) -> list[int]:
    runs = [level(i, s) for i, s in enumerate(sizes)]
    unit = c._pick_for_size_ratio(len(sizes), runs)
    if unit is None:
        return sizes
    compact = sizes_of(unit)
    rest = list(sizes)
    for s in compact:
        rest.remove(s)
    return [sum(compact), *rest]


def _append_and_pick_for_size_ratio(c: UniversalCompaction, sizes: list[int]) -> list[int]:
    return _pick_for_size_ratio(c, _add_size(sizes))


def test_size_amplification():
    c = universal(25, 0, 1)
    sizes = [1]
    expected = [
        [2],
        [3],
        [4],
        [1, 4],
        [6],
        [1, 6],
        [8],
        [1, 8],
        [1, 1, 8],
        [11],
        [1, 11],
        [1, 1, 11],
        [14],
        [1, 14],
        [1, 1, 14],
        [1, 1, 1, 14],
        [18],
    ]
    for step, want in enumerate(expected):
        sizes = _append_and_pick_for_size_amp(c, sizes)
        assert sizes == want, f"step {step}"


def test_size_ratio():
    c = universal(25, 1, 5)
    sizes = [1, 1, 1, 1]
    expected = [
        [5],
        [1, 5],
        [1, 1, 5],
        [1, 1, 1, 5],
        [4, 5],
        [1, 4, 5],
        [1, 1, 4, 5],
        [3, 4, 5],
        [1, 3, 4, 5],
        [2, 3, 4, 5],
        [1, 2, 3, 4, 5],
        [16],
        [1, 16],
        [1, 1, 16],
        [1, 1, 1, 16],
        [4, 16],
        [1, 4, 16],
        [1, 1, 4, 16],
        [3, 4, 16],
        [1, 3, 4, 16],
        [2, 3, 4, 16],
        [1, 2, 3, 4, 16],
        [11, 16],
    ]
    for step, want in enumerate(expected):
        sizes = _append_and_pick_for_size_ratio(c, sizes)
        assert sizes == want, f"step {step}"


def test_size_ratio_threshold():
    sizes = [8, 9, 10]
    assert _pick_for_size_ratio(universal(25, 10, 2), sizes) == [8, 9, 10]
    assert _pick_for_size_ratio(universal(25, 20, 2), sizes) == [27]


# -- lakestore additions (same fakes) ---------------------------------------------------------


def test_below_trigger_picks_nothing():
    assert universal(200, 1, 5).pick(6, level0(1, 1, 1, 1)) is None


def test_full_compaction_takes_every_run_to_the_last_level():
    unit = pick_full_compaction(6, [level(0, 1), level(0, 2), level(3, 5)])
    assert unit is not None and unit.output_level == 5 and sizes_of(unit) == [1, 2, 5]
    # A lone run already on the last level needs nothing.
    assert pick_full_compaction(6, [level(5, 7)]) is None
    assert pick_full_compaction(6, []) is None
    # A lone run on a lower level is still moved (upgraded) to the last level.
    unit = pick_full_compaction(6, [level(2, 7)])
    assert unit is not None and unit.output_level == 5
