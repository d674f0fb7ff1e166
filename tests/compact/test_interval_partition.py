"""interval_partition: Paimon's IntervalPartitionTest cases (sections of transitively
overlapping key ranges, in key order). lakestore's sections are lists of files (it merges a
section by sorting, so it does not pack a section into sorted runs): the cases compare the set
of files of each section."""

from __future__ import annotations

import random
import re

import pytest

from lakestore.compact.task import interval_partition

from ._fakes import INT, file


def parse(text: str):
    return [
        file(100, name=f"f{i}-{a}-{b}", min_key=int(a), max_key=int(b)) for i, (a, b) in enumerate(re.findall(r"\[(\d+), (\d+)\]", text))
    ]


def bounds(section) -> list[tuple[int, int]]:
    from lakestore.format.binary_row import decode_row

    return sorted((decode_row(f.min_key, [INT])[0], decode_row(f.max_key, [INT])[0]) for f in section)


@pytest.mark.parametrize(
    ("given", "sections"),
    [
        # testSameMinKey: one section of four runs
        ("[100, 200], [100, 400], [100, 300], [100, 500]", [[(100, 200), (100, 300), (100, 400), (100, 500)]]),
        # testSameMaxKey
        ("[100, 500], [300, 500], [200, 500], [400, 500]", [[(100, 500), (200, 500), (300, 500), (400, 500)]]),
        # testSectionPartitioning: key ranges are inclusive, so [0, 9] and [9, 15] overlap
        ("[0, 9], [5, 7], [9, 15], [16, 22], [16, 28], [24, 32]", [[(0, 9), (5, 7), (9, 15)], [(16, 22), (16, 28), (24, 32)]]),
    ],
)
def test_paimon_cases(given, sections):
    got = interval_partition(parse(given), [INT])
    assert [bounds(s) for s in got] == sections


def test_disjoint_files_are_separate_sections_in_key_order():
    got = interval_partition(parse("[20, 29], [0, 9], [10, 19]"), [INT])
    assert [bounds(s) for s in got] == [[(0, 9)], [(10, 19)], [(20, 29)]]


@pytest.mark.parametrize("seed", range(20))
def test_random_sections_are_maximal_and_disjoint(seed):
    # Paimon's randomTest builds sorted runs of disjoint intervals; check the defining property:
    # sections are disjoint, ordered, and each one is connected (cannot be split further).
    r = random.Random(seed)
    intervals = []
    for _ in range(r.randint(1, 10)):
        points = sorted(r.sample(range(1000), 2 * r.randint(1, 10)))
        intervals += [(points[j], points[j + 1]) for j in range(0, len(points), 2)]
    files = [file(100, name=f"f{i}", min_key=a, max_key=b) for i, (a, b) in enumerate(intervals)]
    sections = [bounds(s) for s in interval_partition(files, [INT])]
    assert sorted(x for s in sections for x in s) == sorted(intervals)
    for before, after in zip(sections, sections[1:], strict=False):
        assert max(b for _, b in before) < min(a for a, _ in after)
    for s in sections:
        reach = s[0][1]
        for a, b in s[1:]:
            assert a <= reach, "section is not connected"
            reach = max(reach, b)
