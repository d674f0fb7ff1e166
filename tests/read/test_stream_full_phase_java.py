"""The full phase of ``Table.stream(start="full")`` on a lookup table Paimon 2.0's Java core wrote:
its level-0 files carry no changelog (the compaction that moves them up commits it), so the full
phase reads the levels above 0 only, as Paimon's ``DataTableStreamScan``, and every change
arrives once. ``write-only`` keeps Java's commits on level 0 until an explicit compaction."""

from __future__ import annotations

import pyarrow as pa
import pytest

import lakestore
from lakestore.scan.changes import ROW_KIND_COLUMN
from tests.oracle.java_driver import java_oracle
from tests.read.test_stream_full_phase import COMMITS, SCHEMA, _fold, _latest, _rows, _state

pytestmark = pytest.mark.oracle


def _batch(rows: list[tuple[int, int | None, str | None]]) -> pa.Table:
    ids, vs, ss = zip(*rows, strict=True)
    return pa.table({"id": list(ids), "v": list(vs), "s": list(ss)}, schema=SCHEMA)


@pytest.mark.parametrize("engine", ["deduplicate", "partial-update"])
def test_lookup_stream_of_paimon_writes_starts_above_level_zero(tmp_path, engine: str) -> None:
    java = java_oracle()
    warehouse = tmp_path / "wh"
    options = {"bucket": "2", "changelog-producer": "lookup", "merge-engine": engine, "write-only": "true"}
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=["id"], options=options)

    def compact() -> None:  # write-only writers do not compact: a compaction job does
        java.alter(warehouse, "db.t", [{"op": "set_option", "key": "write-only", "value": "false"}])
        java.compact(warehouse, "db.t")
        java.alter(warehouse, "db.t", [{"op": "set_option", "key": "write-only", "value": "true"}])

    java.write(warehouse, "db.t", _batch(COMMITS[0]))
    compact()
    table = lakestore.Catalog(str(warehouse)).get_table("db.t")
    compacted = _latest(table)
    assert compacted.commit_kind == "COMPACT" and all(f.level > 0 for f in table.store.live_files(compacted))
    java.write(warehouse, "db.t", _batch(COMMITS[1]))
    start = _latest(table)
    assert start.commit_kind == "APPEND" and not start.changelog_record_count
    assert any(f.level == 0 for f in table.store.live_files(start))

    stream = table.stream(start="full")
    initial = stream.poll()
    assert initial is not None and set(initial.column(ROW_KIND_COLUMN).to_pylist()) <= {"+I"}
    # the compacted rows only: COMMITS[1] arrives with the changelog of the next compaction
    assert _fold(_rows(initial)) == _state(table, compacted.id) != _state(table, start.id)
    compact()
    for commit in COMMITS[2:]:
        java.write(warehouse, "db.t", _batch(commit))
        compact()
    changes = [c for batch in stream for c in _rows(batch)]
    final = _fold(changes, _fold(_rows(initial)))
    assert final == _state(table)
    rows = java.read(warehouse, "db.t")
    assert {r["id"]: (r["id"], r["v"], r["s"]) for r in rows.to_pylist()} == final
