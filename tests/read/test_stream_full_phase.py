"""The full phase of ``Table.stream(start="full")`` on tables whose changelog comes from
compaction: as Paimon's ``DataTableStreamScan`` (``lookup``: levels above 0; ``full-compaction``:
the last level only), it reads what a changelog was already committed for, so that the rows
still on lower levels arrive once, with the changelog of the compaction that moves them up.
lakestore's lookup writers commit the changelog of their level-0 files with them: those are read
in the full phase. Lookup tables Paimon Java writes: test_stream_full_phase_java.py.
"""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.meta.snapshot import Snapshot
from lakestore.read.planner import Levels, ScanPlanner
from lakestore.scan.changes import ROW_KIND_COLUMN

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()), ("s", pa.string())])
_counter = itertools.count()

Row = tuple[Any, ...]


def _table(tmp_path, **options: str) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db", exist_ok=True)
    return catalog.create_table(f"db.t{next(_counter)}", schema=SCHEMA, primary_keys=["id"], options={"bucket": "2", **options})


def _write(table: lakestore.Table, rows: list[tuple[int, int | None, str | None]]) -> None:
    ids, vs, ss = zip(*rows, strict=True)
    table.write_arrow(pa.table({"id": list(ids), "v": list(vs), "s": list(ss)}, schema=SCHEMA))


def _latest(table: lakestore.Table) -> Snapshot:
    snapshot = table.latest_snapshot()
    assert snapshot is not None
    return snapshot


def _rows(batch: pa.Table) -> list[tuple[str, Row]]:
    return [(r[ROW_KIND_COLUMN], (r["id"], r["v"], r["s"])) for r in batch.to_pylist()]


def _fold(changes: list[tuple[str, Row]], state: dict[int, Row] | None = None) -> dict[int, Row]:
    """Applies changes strictly: a retraction must name the row that is there, an insert or
    update-after must find its key absent (else the change was delivered twice)."""
    state = dict(state or {})
    for kind, row in changes:
        if kind in ("-U", "-D"):
            assert state.get(row[0]) == row, f"{kind}{row} retracts {state.get(row[0])}"
            del state[row[0]]
        else:
            assert row[0] not in state, f"{kind}{row} but {state[row[0]]} is there"
            state[row[0]] = row
    return state


def _state(table: lakestore.Table, snapshot_id: int | None = None) -> dict[int, Row]:
    rows = table.to_arrow(snapshot_id=snapshot_id).to_pylist() if snapshot_id else table.to_arrow().to_pylist()
    return {r["id"]: (r["id"], r["v"], r["s"]) for r in rows}


COMMITS: list[list[tuple[int, int | None, str | None]]] = [
    [(k, k, f"a{k}") for k in range(12)],
    [(k, 100 + k, None) for k in range(0, 12, 2)] + [(k, None, f"b{k}") for k in (1, 3, 20, 21)],
    [(k, 200 + k, f"c{k}") for k in (0, 1, 5, 21, 30)],
    [(k, 300 + k, None) for k in (0, 2, 30, 31)],
]


@pytest.mark.parametrize(
    "options",
    [
        {"merge-engine": "deduplicate"},
        {"merge-engine": "partial-update"},
        {"merge-engine": "deduplicate", "write-only": "true"},
        {"merge-engine": "partial-update", "write-only": "true"},
        {"merge-engine": "deduplicate", "deletion-vectors.enabled": "true"},
    ],
    ids=["deduplicate", "partial-update", "write-only", "partial-update-write-only", "deletion-vectors"],
)
def test_lookup_stream_of_lakestore_writes(tmp_path, options: dict[str, str]) -> None:
    """lakestore's lookup writers commit the changelog of their level-0 files with them (in the
    APPEND snapshot): the full phase reads those files, and every change arrives once."""
    table = _table(tmp_path, **{"changelog-producer": "lookup", **options})
    write_only = options.get("write-only") == "true"
    _write(table, COMMITS[0])
    if write_only:
        table.compact(full=True)
    _write(table, COMMITS[1])
    start = _latest(table)
    if "deletion-vectors.enabled" not in options:
        assert start.commit_kind == "APPEND" and any(f.level == 0 for f in table.store.live_files(start))

    stream = table.stream(start="full")
    assert stream.next_snapshot == start.id + 1
    initial = stream.poll()
    assert initial is not None and set(initial.column(ROW_KIND_COLUMN).to_pylist()) <= {"+I"}
    assert _fold(_rows(initial)) == _state(table, start.id)
    for commit in COMMITS[2:]:
        _write(table, commit)
        if write_only:
            table.compact(full=True)
    changes = [c for batch in stream for c in _rows(batch)]
    assert _fold(changes, _fold(_rows(initial))) == _state(table)


@pytest.mark.parametrize("engine", ["deduplicate", "partial-update"])
def test_full_compaction_stream_starts_from_the_last_level(tmp_path, engine: str) -> None:
    """Started on an APPEND snapshot, the full phase is the last full compaction's output: the
    later commits arrive with the next full compaction's changelog (Paimon refuses deletion
    vectors with this producer)."""
    options = {"changelog-producer": "full-compaction", "full-compaction.delta-commits": "2", "merge-engine": engine}
    table = _table(tmp_path, **options)
    write = table.new_write(commit_user="u")  # one writer counts the delta commits
    commit = table.new_commit(commit_user="u")

    def step(i: int) -> None:
        rows = COMMITS[i]
        ids, vs, ss = zip(*rows, strict=True)
        write.write_arrow(pa.table({"id": list(ids), "v": list(vs), "s": list(ss)}, schema=SCHEMA))
        commit.commit(write.prepare_commit(), i)

    step(0)  # APPEND 1
    step(1)  # APPEND 2, COMPACT 3 (a full compaction and its changelog)
    compacted = _latest(table)
    assert compacted.commit_kind == "COMPACT"
    top = table.schema.core_options().num_levels - 1
    assert {f.level for f in table.store.live_files(compacted)} == {top}
    step(2)  # APPEND 4
    start = _latest(table)
    assert start.commit_kind == "APPEND"
    assert _state(table, start.id) != _state(table, compacted.id)

    stream = table.stream(start="full")
    initial = stream.poll()
    assert initial is not None
    assert _fold(_rows(initial)) == _state(table, compacted.id)

    step(3)  # APPEND 5, COMPACT 6: the changelog of COMMITS[2] and [3]
    assert _latest(table).commit_kind == "COMPACT"
    changes = [c for batch in stream for c in _rows(batch)]
    assert _fold(changes, _fold(_rows(initial))) == _state(table)
    write.close()


def test_input_and_none_streams_read_every_level(tmp_path) -> None:
    """Where the changelog is the input (or the APPEND deltas), the full phase reads level 0 too."""
    for producer in ("input", "none"):
        table = _table(tmp_path, **{"changelog-producer": producer, "write-only": "true"})
        _write(table, COMMITS[0])
        _write(table, COMMITS[1])
        stream = table.stream(start="full")
        initial = stream.poll()
        assert initial is not None and _fold(_rows(initial)) == _state(table)


def test_planner_level_range(tmp_path) -> None:
    table = _table(tmp_path, **{"changelog-producer": "lookup", "write-only": "true"})
    _write(table, COMMITS[0])
    table.compact(full=True)
    _write(table, COMMITS[1])
    snapshot = _latest(table)
    planner = ScanPlanner(table.schema, table.store.manifests())
    levels = {f.level for s in planner.plan(snapshot) for f in s.files}
    top = table.schema.core_options().num_levels - 1
    assert levels == {0, top}
    assert {f.level for s in planner.plan(snapshot, levels=Levels(1)) for f in s.files} == {top}
    assert {f.level for s in planner.plan(snapshot, levels=Levels(0, 0)) for f in s.files} == {0}
    assert planner.plan(snapshot, levels=Levels(1, top - 1)) == []
    assert 0 in Levels() and 3 in Levels(1) and 0 not in Levels(1) and top + 1 not in Levels(top, top)
