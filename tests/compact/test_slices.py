"""Compaction in key-range slices: the output is the same rows in the same order as merging each
section at once, for every merge engine, deletes, sequence fields and deletion vectors."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakestore
import lakestore.compact.bucket as compact_module
from lakestore.compact.slices import key_slices
from lakestore.compact.task import MergeTreeCompactTask
from lakestore.format.binary_row import decode_row
from tests.compact._tables import catalog, live_files

SCHEMA = pa.schema(
    [("k", pa.string()), ("n", pa.int64()), ("v", pa.int64()), ("s", pa.string()), ("seq", pa.int64()), ("kind", pa.string())]
)

ENGINES = {
    "deduplicate": {},
    "sequence-field": {"sequence.field": "seq"},
    "partial-update": {"merge-engine": "partial-update", "partial-update.ignore-delete": "true"},
    "aggregation": {
        "merge-engine": "aggregation",
        "fields.v.aggregate-function": "sum",
        "fields.seq.aggregate-function": "max",
        "fields.seq.ignore-retract": "true",
        "fields.s.ignore-retract": "true",
    },
    "first-row": {"merge-engine": "first-row"},
    "deletion-vectors": {"deletion-vectors.enabled": "true"},
    # writers compact every commit: older versions on the top level get deletion vectors
    "deletion-vectors-writer-compaction": {"deletion-vectors.enabled": "true", "write-only": "false"},
    "deduplicate-writer-compaction": {"write-only": "false", "num-sorted-run.compaction-trigger": "2"},
    "full-compaction-changelog": {"changelog-producer": "full-compaction"},
}


def _batch(rng: np.random.Generator, version: int, rows: int, *, deletes: bool) -> pa.Table:
    n = rng.choice(300, size=rows, replace=False)
    kinds = np.where(rng.random(rows) < 0.15, "-D", "+I") if deletes else np.full(rows, "+I")
    values = rng.integers(0, 100, rows)
    return pa.table(
        {
            "k": pa.array([f"key{i % 4}" for i in n]),
            "n": pa.array(n, pa.int64()),
            "v": pa.array(np.where(rng.random(rows) < 0.2, None, values), pa.int64(), from_pandas=True),
            "s": pa.array([None if x % 5 == 0 else f"s{version}-{x}" for x in values]),
            "seq": pa.array(rng.integers(0, 5, rows), pa.int64()),
            "kind": pa.array(kinds),
        },
        schema=SCHEMA,
    )


def _table(root, name: str, options: dict[str, str]) -> lakestore.Table:
    opts = {"bucket": "1", "write-only": "true", "rowkind.field": "kind", **options}
    return catalog(root).create_table(f"db.{name}", schema=SCHEMA, primary_keys=["k", "n"], options=opts)


def _output_rows(table: lakestore.Table) -> pa.Table:
    """The live files' raw rows (key copies, sequence numbers, kinds), files in key order."""
    files = live_files(table)
    types = table.schema.types_of(table.schema.trimmed_primary_keys)
    files.sort(key=lambda f: (f.level, decode_row(f.min_key, types)))
    bucket_dir = f"{table.path}/bucket-0"
    return pa.concat_tables([pq.read_table(f"{bucket_dir}/{f.file_name}") for f in files])


def _changelog_rows(table: lakestore.Table) -> list[dict]:
    snap = table.latest_snapshot()
    return table.read_changes(from_snapshot_id=snap.id - 1, to_snapshot_id=snap.id).to_pylist()


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_sliced_compaction_equals_whole_section_merge(tmp_path, monkeypatch, engine):
    options = ENGINES[engine]
    deletes = engine not in ("first-row",)
    outputs = []
    for name, batch_rows, slice_bytes in (("whole", 1 << 30, 1 << 40), ("sliced", 7, 1)):
        monkeypatch.setattr(compact_module, "BATCH_ROWS", batch_rows)
        monkeypatch.setattr(compact_module, "SLICE_BYTES", slice_bytes)
        table = _table(tmp_path / name, name, options)
        rng = np.random.default_rng(11)
        for version in range(6):
            if version == 3:
                table.compact(full=True)  # a top level, then more runs over it
            table.write_arrow(_batch(rng, version, 120, deletes=deletes))
        if engine == "deletion-vectors-writer-compaction":
            assert table.latest_snapshot().index_manifest is not None  # vectors to apply while reading
        done = table.compact(full=True)
        assert done or "write-only" in options
        changelog = _changelog_rows(table) if engine == "full-compaction-changelog" else None
        outputs.append((_output_rows(table), table.to_arrow().sort_by([("k", "ascending"), ("n", "ascending")]), changelog))
    (whole_rows, whole_read, whole_log), (sliced_rows, sliced_read, sliced_log) = outputs
    assert sliced_rows.num_rows > 0
    assert sliced_rows.equals(whole_rows)
    assert sliced_read.equals(whole_read)
    assert sliced_log == whole_log


def test_slices_are_disjoint_ascending_and_complete():
    # three overlapping sorted runs (duplicate keys across runs), read 5 rows at a time
    runs = [pa.table({"a": ["x"] * 40, "b": pa.array(range(i, 40 * 3 + i, 3), pa.int64()), "run": [i] * 40}) for i in range(3)]
    runs.append(pa.table({"a": ["w"] * 3 + ["y"] * 3, "b": pa.array([1, 2, 3, 1, 2, 3], pa.int64()), "run": [3] * 6}))
    runs = [r.sort_by([("a", "ascending"), ("b", "ascending")]) for r in runs]
    files = [SimpleNamespace(file_size=1 << 30, run=i) for i in range(len(runs))]  # too big for one slice

    def batches(f):
        rows = runs[f.run]
        for start in range(0, rows.num_rows, 5):
            yield rows.slice(start, 5)

    slices = list(key_slices(files, batches, ["a", "b"], slice_bytes=1))  # type: ignore[arg-type]
    assert len(slices) > 5
    keys = [list(zip(s.column("a").to_pylist(), s.column("b").to_pylist(), strict=True)) for s in slices]
    for before, after in zip(keys, keys[1:], strict=False):
        assert max(before) < min(after)
    got = pa.concat_tables(slices)
    assert sorted(got.to_pylist(), key=lambda r: (r["a"], r["b"], r["run"])) == sorted(
        pa.concat_tables(runs).to_pylist(), key=lambda r: (r["a"], r["b"], r["run"])
    )
    # within a slice a key's rows keep the order of the runs
    for s in slices:
        order = {}
        for a, b, run in zip(s.column("a").to_pylist(), s.column("b").to_pylist(), s.column("run").to_pylist(), strict=True):
            assert order.get((a, b), -1) < run
            order[(a, b)] = run


def test_compaction_reads_more_than_one_slice(tmp_path, monkeypatch):
    table = _table(tmp_path, "t", {})
    rng = np.random.default_rng(3)
    for version in range(4):
        table.write_arrow(_batch(rng, version, 200, deletes=False))
    counts = []
    original = MergeTreeCompactTask._rewrite_sections

    def spy(self, sections, result):
        original(self, sections, result)
        counts.append(self.slices_merged)

    monkeypatch.setattr(MergeTreeCompactTask, "_rewrite_sections", spy)
    monkeypatch.setattr(compact_module, "BATCH_ROWS", 50)
    monkeypatch.setattr(compact_module, "SLICE_BYTES", 4096)
    table.compact(full=True)
    assert sum(counts) > 1
