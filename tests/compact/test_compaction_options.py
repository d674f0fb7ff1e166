"""Compaction options of Paimon 2.0 (pickers, without files on disk; the cases follow Paimon's
UniversalCompactionTest / ForceUpLevel0CompactionTest and its CompactStrategy,
MergeTreeCompactTask, BucketedAppendCompactManager and AppendCompactCoordinator sources; the
table-level behaviour is compared with Paimon Java in tests/interop/test_java_maintenance_options.py):

- ``compaction.total-size-threshold``: several runs smaller than it in total: a full compaction;
- ``compaction.force-rewrite-all-files``: a full compaction of one top-level run rewrites every
  file, and no compaction upgrades a file by metadata;
- full compaction of one top-level run rewrites the files with a deletion vector;
- ``compaction.delete-ratio-threshold``: an append file whose vector deletes more than that
  share of its rows is compacted whatever its size;
- ``compaction.file-num-limit``: a bucket-unaware append table is planned in chunks of that many files."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest

import lakestore
from lakestore.compact.append import pick_append_files, too_many_deleted
from lakestore.compact.levels import LevelSortedRun
from lakestore.compact.task import MergeTreeCompactTask
from lakestore.compact.universal import UniversalCompaction, pick_force_up_level0, pick_full_compaction
from lakestore.errors import OptionError
from lakestore.meta.commit_message import CompactResult

from ._fakes import INT, file, level, sizes_of
from ._tables import live_files


def test_total_size_threshold_forces_full_compaction():
    picker = UniversalCompaction(100, 1, 3, total_size_threshold=10)
    unit = picker.pick(3, [level(0, 1), level(1, 3), level(2, 5)])
    assert unit is not None and sizes_of(unit) == [1, 3, 5] and unit.output_level == 2
    assert picker.pick(3, [level(0, 2), level(1, 6), level(2, 10)]) is None
    assert picker.pick(3, [level(2, 5)]) is None  # one run: nothing to merge
    assert UniversalCompaction(100, 1, 3).pick(3, [level(0, 1), level(1, 3), level(2, 5)]) is None


def test_force_up_level0_takes_level1_along():
    picker = UniversalCompaction(200, 1, 5)
    unit = pick_force_up_level0(picker, 3, [level(0, 1), level(1, 99), level(2, 100)])
    assert unit is not None and len(unit.files) == 3 and unit.output_level == 2
    unit = pick_force_up_level0(picker, 3, [level(0, 1), level(1, 99), level(2, 102)])
    assert unit is not None and len(unit.files) == 2 and unit.output_level == 1
    unit = pick_force_up_level0(picker, 3, [level(0, 1), level(0, 5), level(2, 10)])
    assert unit is not None and unit.output_level == 1
    assert pick_force_up_level0(picker, 3, [level(2, 10)]) is None


def test_full_compaction_of_one_top_run():
    top = LevelSortedRun(2, (file(10, level=2, name="a"), file(10, level=2, name="b")))
    assert pick_full_compaction(3, [top]) is None
    unit = pick_full_compaction(3, [top], force_rewrite_all=True)
    assert unit is not None and unit.file_rewrite and [f.file_name for f in unit.files] == ["a", "b"]
    unit = pick_full_compaction(3, [top], has_vector=lambda f: f.file_name == "b")
    assert unit is not None and unit.file_rewrite and [f.file_name for f in unit.files] == ["b"] and unit.output_level == 2
    unit = pick_full_compaction(3, [level(0, 1), top], force_rewrite_all=True)
    assert unit is not None and not unit.file_rewrite and len(unit.files) == 3


class _Recorder(MergeTreeCompactTask):
    def __init__(self, **kwargs):
        super().__init__(
            output_level=2,
            max_level=2,
            drop_delete=True,
            min_file_size=5,
            key_names=["k"],
            key_types=[INT],
            sequence_fields=[],
            merge_engine=None,  # type: ignore[arg-type]
            read_file=lambda f: pa.table({}),
            writer=None,  # type: ignore[arg-type]
            **kwargs,
        )
        self.rewritten: list[str] = []

    def _rewrite_sections(self, sections, result: CompactResult) -> None:
        for section in sections:
            self.rewritten += [f.file_name for f in section]
            result.before.extend(section)


def test_force_rewrite_all_files_never_upgrades():
    big = file(100, level=1, name="big")
    top = file(100, level=2, name="top")
    plain = _Recorder()
    result = plain.run([big])
    assert plain.rewritten == [] and [f.level for f in result.after] == [2]  # upgraded by metadata
    forced = _Recorder(force_rewrite_all=True)
    forced.run([big])
    assert forced.rewritten == ["big"]
    forced = _Recorder(force_rewrite_all=True)
    forced.rewrite_files([top])
    assert forced.rewritten == ["top"]


def test_delete_ratio_threshold_picks_large_files_with_many_deletes():
    small, large = file(1, name="s1", seq=1), file(100, name="big", seq=2)
    deleted = dataclasses.replace(file(100, name="dv", seq=3), row_count=100)
    rows = {"dv": 30}
    assert too_many_deleted(deleted, 30, 0.2) and not too_many_deleted(deleted, 20, 0.2) and not too_many_deleted(deleted, None, 0.2)
    picked = pick_append_files(
        [small, large, deleted],
        small_file_size=10,
        min_file_num=2,
        max_file_num=50,
        full=False,
        deleted_rows=lambda f: rows.get(f.file_name),
        delete_ratio_threshold=0.2,
    )
    assert [f.file_name for f in picked] == ["s1", "dv"]
    forced = pick_append_files([large, small], small_file_size=10, min_file_num=5, max_file_num=50, full=True, force_rewrite_all=True)
    assert [f.file_name for f in forced] == ["s1", "big"]


SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_file_num_limit_plans_unaware_append_tables_in_chunks(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    options = {"write-only": "true", "compaction.file-num-limit": "3", "compaction.min.file-num": "2"}
    table = catalog.create_table("db.a", schema=SCHEMA, options=options)
    for i in range(7):
        table.write_arrow(pa.table({"id": [i], "v": ["x"]}, schema=SCHEMA))
    table.compact()
    # chunks of 3, 3 and 1 files in scan order: the last file, alone in its chunk, stays
    assert sorted(f.row_count for f in live_files(table)) == [1, 3, 3]
    assert sorted(table.to_arrow()["id"].to_pylist()) == list(range(7))


def test_compaction_options_are_validated(tmp_path):
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    for i, (key, value) in enumerate(
        [
            ("compaction.total-size-threshold", "lots"),
            ("compaction.file-num-limit", "0"),
            ("compaction.delete-ratio-threshold", "x"),
            ("compaction.force-rewrite-all-files", "maybe"),
        ]
    ):
        with pytest.raises(OptionError):
            catalog.create_table(f"db.t{i}", schema=SCHEMA, options={key: value})
