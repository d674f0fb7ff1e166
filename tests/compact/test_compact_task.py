"""MergeTreeCompactTask on real files: upgrade without rewriting, small-file rewrite, delete
dropping only at the last level, output rolling at target-file-size."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from lakestore.compact import BucketCompactor
from lakestore.compact.task import MergeTreeCompactTask
from lakestore.format.binary_row import EMPTY_ROW, decode_row
from lakestore.format.kv import DELETE, VALUE_KIND
from lakestore.meta.commit_message import CommitMessage

from ._tables import PK_SCHEMA, catalog, kv, live_files, parquet_files


@pytest.fixture
def table(tmp_path):
    return catalog(tmp_path / "wh").create_table(
        "db.t", schema=PK_SCHEMA, primary_keys=["id"], options={"bucket": "1", "rowkind.field": "kind"}
    )


def compactor(table) -> BucketCompactor:
    return BucketCompactor(table.store.file_io, table.path, table.schema, table.store.schema_manager, partition_values=(), bucket=0)


def task(table, c: BucketCompactor, *, output_level: int, min_file_size: int, drop_delete: bool = False) -> MergeTreeCompactTask:
    schema = table.schema
    return MergeTreeCompactTask(
        output_level=output_level,
        max_level=5,
        drop_delete=drop_delete,
        min_file_size=min_file_size,
        key_names=schema.trimmed_primary_keys,
        key_types=schema.types_of(schema.trimmed_primary_keys),
        sequence_fields=(),
        merge_engine=c.merge_engine,
        read_file=c.read_file,
        writer=c.writer,
    )


def test_lone_large_file_is_upgraded_without_rewriting(table):
    table.write_arrow(kv(range(100)))
    [f] = live_files(table)
    on_disk = parquet_files(table)
    result = task(table, compactor(table), output_level=5, min_file_size=1).run([f])
    assert [g.file_name for g in result.before] == [f.file_name]
    assert [(g.file_name, g.level) for g in result.after] == [(f.file_name, 5)]
    assert parquet_files(table) == on_disk  # metadata only: no new parquet file


def test_table_full_compaction_upgrades_a_lone_large_file(tmp_path):
    t = catalog(tmp_path / "wh").create_table(
        "db.u", schema=PK_SCHEMA, primary_keys=["id"], options={"bucket": "1", "target-file-size": "1 kb"}
    )
    # 5 rows: one file in memory (< 1 kb), but parquet's footer makes it >= 70% of 1 kb on disk.
    t.write_arrow(kv(range(5)))
    [f] = live_files(t)
    on_disk = parquet_files(t)
    [snap] = t.compact(full=True)
    assert snap.commit_kind == "COMPACT"
    [g] = live_files(t)
    assert (g.file_name, g.level, f.level) == (f.file_name, 5, 0)
    assert parquet_files(t) == on_disk
    assert t.to_arrow().num_rows == 5


def test_small_files_are_rewritten_together(table):
    table.write_arrow(kv(range(0, 100)))
    table.write_arrow(kv(range(100, 200)))  # disjoint: two one-file sections
    files = live_files(table)
    on_disk = parquet_files(table)
    result = task(table, compactor(table), output_level=5, min_file_size=max(f.file_size for f in files) + 1).run(files)
    assert {g.file_name for g in result.before} == {f.file_name for f in files}
    [out] = result.after
    assert out.file_name not in on_disk and out.level == 5 and out.row_count == 200
    assert parquet_files(table) == on_disk | {out.file_name}


def test_lone_small_file_is_upgraded_as_in_paimon(table):
    # Paimon's rewrite() upgrades a candidate made of one single-file section: rewriting a lone
    # file could not make it any bigger.
    table.write_arrow(kv(range(100)))
    [f] = live_files(table)
    result = task(table, compactor(table), output_level=5, min_file_size=f.file_size + 1).run([f])
    assert [(g.file_name, g.level) for g in result.after] == [(f.file_name, 5)]


def test_sections_small_files_join_the_rewrite_and_large_disjoint_files_upgrade(table):
    table.write_arrow(kv(range(0, 100)))  # A  [0, 99]   large
    table.write_arrow(kv(range(200, 203)))  # B  [200, 202] small
    table.write_arrow(kv(range(300, 400)))  # C  [300, 399] large
    table.write_arrow(kv(range(50, 60), "y"))  # D  [50, 59] overlaps A (small)
    files = live_files(table)
    first = lambda f: decode_row(f.min_key, table.schema.types_of(["id"]))[0]  # noqa: E731
    a, d, b, c = sorted(files, key=lambda f: (first(f), -f.row_count))
    assert (first(a), first(b), first(c), first(d)) == (0, 200, 300, 50)
    threshold = min(a.file_size, c.file_size)
    assert b.file_size < threshold and d.file_size < threshold
    result = task(table, compactor(table), output_level=3, min_file_size=threshold).run(files)
    upgraded = [g for g in result.after if g.file_name == c.file_name]
    assert [g.level for g in upgraded] == [3]
    rewritten = [g for g in result.after if g.file_name not in {f.file_name for f in files}]
    # {A, D} overlap and B is small: one rewrite of A, D and B (Paimon never skips a file).
    assert {g.file_name for g in result.before} == {a.file_name, b.file_name, c.file_name, d.file_name}
    assert sum(g.row_count for g in rewritten) == 103
    assert all(g.level == 3 for g in result.after)


def _kinds(table, f):
    return pq.read_table(f"{table.path}/bucket-0/{f.file_name}").column(VALUE_KIND).to_pylist()


def test_deletes_kept_below_the_last_level_and_dropped_at_it(table):
    table.write_arrow(kv(range(10)))
    table.write_arrow(kv([1, 2, 3], kind="-D"))
    files = live_files(table)
    c = compactor(table)
    kept = task(table, c, output_level=3, min_file_size=1, drop_delete=False).run(files)
    [out] = kept.after
    assert out.row_count == 10 and out.delete_row_count == 3 and _kinds(table, out).count(DELETE) == 3
    dropped = task(table, c, output_level=5, min_file_size=1, drop_delete=True).run(files)
    [out] = dropped.after
    assert out.row_count == 7 and out.delete_row_count == 0 and DELETE not in _kinds(table, out)


class _PickFirst:
    """A picker stub: the first ``n`` sorted runs to ``level``."""

    def __init__(self, n: int, level: int) -> None:
        self.n, self.level = n, level

    def pick(self, num_levels, runs):
        from lakestore.compact.universal import CompactUnit

        return CompactUnit(self.level, tuple(runs[: self.n]))


# Level 1 is below the level-2 run: deletes must stay to shadow it. A unit reaching level 2 has
# to include the level-2 run (the picker's output level is always below the first run it leaves
# out), and then the deletes are dropped.
@pytest.mark.parametrize(("runs", "output_level", "deletes_kept"), [(2, 1, 3), (3, 2, 0)])
def test_compactor_drops_deletes_only_when_output_reaches_highest_level(tmp_path, runs, output_level, deletes_kept):
    t = catalog(tmp_path / "wh").create_table(
        "db.d",
        schema=PK_SCHEMA,
        primary_keys=["id"],
        options={"bucket": "1", "rowkind.field": "kind", "num-sorted-run.compaction-trigger": "2", "write-only": "true"},
    )
    t.write_arrow(kv(range(10)))
    t.compact(full=True)  # level 2 = the last level (num-levels = trigger + 1 = 3)
    assert [f.level for f in live_files(t)] == [2]
    t.write_arrow(kv([1, 2], kind="-D"))
    t.write_arrow(kv([3], kind="-D"))
    c = BucketCompactor(t.store.file_io, t.path, t.schema, t.store.schema_manager, partition_values=(), bucket=0)
    c.picker = _PickFirst(runs, output_level)
    result = c.compact(live_files(t), full=False)
    assert len(result.before) == runs
    assert sum(g.delete_row_count for g in result.after) == deletes_kept
    t.new_commit(commit_user="c").commit(
        [CommitMessage(EMPTY_ROW, 0, 1, compact_before=tuple(result.before), compact_after=tuple(result.after))]
    )
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 4, 5, 6, 7, 8, 9]
    t.compact(full=True)
    [f] = live_files(t)
    assert f.delete_row_count == 0 and f.row_count == 7
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 4, 5, 6, 7, 8, 9]


def test_lone_file_with_deletes_is_rewritten_not_upgraded_to_the_last_level(tmp_path):
    t = catalog(tmp_path / "wh").create_table(
        "db.l", schema=PK_SCHEMA, primary_keys=["id"], options={"bucket": "1", "rowkind.field": "kind", "target-file-size": "1 kb"}
    )
    t.write_arrow(kv(range(100, 110)))
    t.compact(full=True)
    t.write_arrow(kv([1, 2], kind="-D"))  # disjoint from the level-5 file: a lone section
    [lone] = [f for f in live_files(t) if f.level == 0]
    assert lone.delete_row_count == 2
    t.compact(full=True)
    names = {f.file_name for f in live_files(t)}
    assert lone.file_name not in names  # rewritten (and empty after dropping deletes), never upgraded
    assert all(f.level == 5 and f.delete_row_count == 0 for f in live_files(t))
    assert t.to_arrow().num_rows == 10


def test_output_rolls_at_target_file_size(tmp_path):
    t = catalog(tmp_path / "wh").create_table(
        "db.r", schema=PK_SCHEMA, primary_keys=["id"], options={"bucket": "1", "target-file-size": "4 kb"}
    )
    for start in range(0, 2000, 500):
        t.write_arrow(kv(range(start, start + 500)))
        t.write_arrow(kv(range(start, start + 500), "z"))  # overlapping: forces a rewrite
    t.compact(full=True)
    out = sorted(live_files(t), key=lambda f: decode_row(f.min_key, t.schema.types_of(["id"])))
    assert len(out) > 1 and all(f.level == 5 for f in out)
    assert sum(f.row_count for f in out) == 2000
    # Files roll once they reach the target (checked per row group), as Paimon's rolling writer.
    assert all(f.file_size <= 2 * 4 * 1024 for f in out), [f.file_size for f in out]
    assert all(f.file_size >= 4 * 1024 for f in out[:-1]), [f.file_size for f in out]
    types = t.schema.types_of(["id"])
    for before, after in zip(out, out[1:], strict=False):
        assert decode_row(before.max_key, types) < decode_row(after.min_key, types)
    assert t.to_arrow().column("v").to_pylist() == [f"z{i}" for i in range(2000)] or sorted(t.to_arrow().column("v").to_pylist()) == sorted(
        f"z{i}" for i in range(2000)
    )
