"""After compaction pypaimon and the native (pypaimon-rust) reader read the same rows as lakestore
did before it, for every merge engine (compacted to level >= 1: pypaimon skips level 0 of
first-row tables)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests._support import assert_same_rows
from tests.oracle.driver import oracle_available, oracle_read

from ._tables import catalog, live_files

pytestmark = [pytest.mark.oracle, pytest.mark.skipif(not oracle_available(), reason="oracle venv not available")]

SCHEMA = pa.schema(
    [
        ("dt", pa.string()),
        ("id", pa.int64()),
        ("name", pa.string()),
        ("value", pa.float64()),
        ("version", pa.int32()),
        ("ts", pa.int64()),
    ]
)

ENGINES = {
    "deduplicate": {"sequence.field": "ts"},
    # pypaimon 2.1 refuses partial-update tables with sequence-group (NotImplementedError).
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {
        "merge-engine": "aggregation",
        "fields.value.aggregate-function": "sum",
        "fields.version.aggregate-function": "max",
        "fields.ts.aggregate-function": "last_value",
        "fields.name.aggregate-function": "listagg",
    },
    "first-row": {"merge-engine": "first-row"},
}


def _batch(i: int) -> pa.Table:
    ids = [(i * 3 + j) % 11 for j in range(6)]
    return pa.table(
        {
            "dt": ["2024-01-01" if k % 2 else "2024-01-02" for k in ids],
            "id": ids,
            "name": [None if (i + k) % 4 == 0 else f"n{i}" for k in ids],
            "value": [None if (i + k) % 5 == 0 else float(i * 10 + k) for k in ids],
            "version": [(i * 7 + k) % 4 for k in ids],
            "ts": [100 - i if k % 3 == 0 else i for k in ids],
        },
        schema=SCHEMA,
    )


@pytest.mark.parametrize("engine", list(ENGINES))
def test_oracles_read_compacted_tables_like_lakestore(tmp_path, engine):
    t = catalog(tmp_path / "wh").create_table(
        "db.t",
        schema=SCHEMA,
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={
            "bucket": "2",
            "write-only": "true",
            **ENGINES[engine],
        },
    )
    for i in range(6):
        t.write_arrow(_batch(i))
    uncompacted = t.to_arrow()
    # write-only leaves every row in level 0, which first-row readers skip (as Paimon's do)
    assert uncompacted.num_rows == (0 if engine == "first-row" else 11)
    t.compact(full=True)
    assert all(f.level >= 1 for f in live_files(t))
    before = t.to_arrow()
    assert before.num_rows == 11
    if engine != "first-row":
        assert_same_rows(before, uncompacted, ["dt", "id"])
    assert_same_rows(oracle_read(t.path), before, ["dt", "id"])
    assert_same_rows(oracle_read(t.path, native=True), before, ["dt", "id"])
    # A further write on top of the compacted levels (level 0 + level 5): merge-on-read in the
    # oracles. A first-row compaction always moves level 0 up, so no row stays hidden.
    t.write_arrow(_batch(7))
    t.compact()
    expected = t.to_arrow()
    if engine == "first-row":
        assert not any(f.level == 0 for f in live_files(t))
    assert_same_rows(oracle_read(t.path), expected, ["dt", "id"])
    assert_same_rows(oracle_read(t.path, native=True), expected, ["dt", "id"])
