"""Tables Paimon Java (2.0.0) writes with lookup compaction (``changelog-producer=lookup``,
``force-lookup``) read through Paimon's ``LookupMergeFunction``: per key every level-0 record
plus only the newest record of the lowest level >= 1, because each lookup compaction already
folded the deeper levels' versions into the record it wrote. Merging every level instead counts
aggregated values twice and lets stale partial-update values through."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from lakestore.meta.schema_change import SetOption
from tests.compact._tables import live_files
from tests.interop.conftest import same_rows

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("s", pa.int64()),
        ("w", pa.string()),
        ("g", pa.int64()),
    ]
)
KEYS = ["id"]
ENGINES: dict[str, dict[str, str]] = {
    "aggregation": {
        "merge-engine": "aggregation",
        "fields.s.aggregate-function": "sum",
        "fields.w.aggregate-function": "max",
        "fields.g.aggregate-function": "sum",
    },
    # s sums within the sequence group of g; w takes the last non-null value
    "partial-update": {"merge-engine": "partial-update", "fields.g.sequence-group": "s", "fields.s.aggregate-function": "sum"},
}
PRODUCERS: dict[str, dict[str, str]] = {
    "changelog-producer=lookup": {"changelog-producer": "lookup"},
    "force-lookup": {"force-lookup": "true"},
}
Row = tuple[int, Any, Any, int]
# Four commits over keys 1-6: each Java commit is a lookup compaction of its level-0 file into a
# level above the older ones (5, 4, 3), so keys written more than once have stale versions deeper
# down; the fourth commit's compaction is a full one.
COMMITS: list[list[Row]] = [
    [(i, i, f"a{i}", 1) for i in range(1, 7)],
    [(1, 1, None, 2), (2, None, "b2", 2), (3, 3, "b3", 2), (6, 10, None, 2)],
    [(1, 2, "c1", 3), (3, None, None, 3), (4, 4, None, 3)],
    [(1, 1, None, 4), (2, 2, "d2", 4), (5, None, "d5", 4)],
]


def as_table(rows: list[Row]) -> pa.Table:
    columns = list(zip(*rows, strict=True))
    return pa.table({name: list(values) for name, values in zip(SCHEMA.names, columns, strict=True)}, schema=SCHEMA)


def model(engine: str, commits: int) -> pa.Table:
    state: dict[int, list[Any]] = {}
    for rows in COMMITS[:commits]:
        for key, s, w, g in rows:
            old = state.get(key)
            if old is None:
                state[key] = [s, w, g]
                continue
            total = None if old[0] is None and s is None else (old[0] or 0) + (s or 0)
            if engine == "partial-update":
                state[key] = [total, w if w is not None else old[1], g]
            else:
                state[key] = [total, max((x for x in (old[1], w) if x is not None), default=None), old[2] + g]
    return as_table([(key, *values) for key, values in state.items()])


@pytest.mark.parametrize("producer", list(PRODUCERS))
@pytest.mark.parametrize("engine", list(ENGINES))
def test_java_lookup_writes_lakestore_reads(java, catalog, warehouse, engine, producer):
    options = {"bucket": "1", **ENGINES[engine], **PRODUCERS[producer]}
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=KEYS, options=options)
    for index in range(len(COMMITS)):
        java.write(warehouse, "db.t", as_table(COMMITS[index]))
        expected = model(engine, index + 1)
        same_rows(java.read(warehouse, "db.t"), expected, KEYS)
        same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)


@pytest.mark.parametrize("producer", list(PRODUCERS))
@pytest.mark.parametrize("engine", list(ENGINES))
def test_lakestore_compacts_java_lookup_levels(java, catalog, warehouse, engine, producer):
    options = {"bucket": "1", **ENGINES[engine], **PRODUCERS[producer]}
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=KEYS, options=options)
    for index in range(3):
        java.write(warehouse, "db.t", as_table(COMMITS[index]))
    # Java's lookup compactions left the stale versions in deeper levels
    assert sorted({f.level for f in live_files(catalog.get_table("db.t"))}) == [3, 4, 5]
    expected = model(engine, 3)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    catalog.get_table("db.t").compact(full=True)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    java.write(warehouse, "db.t", as_table(COMMITS[3]))
    same_rows(java.read(warehouse, "db.t"), model(engine, 4), KEYS)
    same_rows(catalog.get_table("db.t").to_arrow(), model(engine, 4), KEYS)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_lakestore_lookup_compaction_folds_deeper_levels(java, catalog, warehouse, engine):
    """lakestore's compaction of its level-0 file into a level above an older one folds that
    level's version of each key in, as Paimon's lookup compaction does: readers of both engines
    then take that level's record alone."""
    filler = [(k, 1, "f", 1) for k in range(100, 3100)]  # a big last level, left alone below
    options = {"bucket": "1", **ENGINES[engine], "changelog-producer": "lookup"}
    java.create_table(warehouse, "db.t", SCHEMA, primary_keys=KEYS, options=options)
    java.write(warehouse, "db.t", as_table(COMMITS[0] + filler))
    for index in (1, 2):
        java.write(warehouse, "db.t", as_table(COMMITS[index]))
    assert sorted(f.level for f in live_files(catalog.get_table("db.t"))) == [3, 4, 5]
    changes = [SetOption("num-sorted-run.compaction-trigger", "2"), SetOption("compaction.max-size-amplification-percent", "100000")]
    catalog.alter_table("db.t", changes)
    catalog.get_table("db.t").write_arrow(as_table(COMMITS[3]))
    catalog.get_table("db.t").compact()
    # level 0 with levels 3 and 4 went to level 4; key 5's older version is only at level 5
    assert sorted(f.level for f in live_files(catalog.get_table("db.t"))) == [4, 5]
    expected = pa.concat_tables([model(engine, 4), as_table(filler)])
    same_rows(catalog.get_table("db.t").to_arrow(), expected, KEYS)
    same_rows(java.read(warehouse, "db.t"), expected, KEYS)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_lakestore_lookup_changelog_over_java_levels(java, catalog, warehouse, engine):
    """lakestore's lookup changelog of a commit over Java's levels: each key's before value is
    its record at the lowest level, not the sum of all levels."""
    java.create_table(
        warehouse, "db.t", SCHEMA, primary_keys=KEYS, options={"bucket": "1", **ENGINES[engine], "changelog-producer": "lookup"}
    )
    for index in range(3):
        java.write(warehouse, "db.t", as_table(COMMITS[index]))
    last = max(s["id"] for s in java.snapshots(warehouse, "db.t"))
    catalog.get_table("db.t").write_arrow(as_table(COMMITS[3]))
    end = max(s["id"] for s in java.snapshots(warehouse, "db.t"))
    touched = {key for key, *_ in COMMITS[3]}
    before, after = (m.filter(pa.compute.is_in(m["id"], pa.array(sorted(touched)))) for m in (model(engine, 3), model(engine, 4)))
    changes = java.changes(warehouse, "db.t", last, end)
    kinds = changes["rowkind"].to_pylist()
    same_rows(changes.filter(pa.array([k == "-U" for k in kinds])), before, KEYS)
    same_rows(changes.filter(pa.array([k == "+U" for k in kinds])), after, KEYS)
    assert set(kinds) == {"-U", "+U"}
