"""Merge options of Paimon 2.0 against Paimon 2.0.0 Java, both ways: ``sequence.field.sort-order``,
``ignore-update-before``, ``partial-update.remove-record-on-delete``,
``aggregation.remove-record-on-delete`` and ``record-level.expire-time``.

Each scenario writes the same commits with Paimon Java (the reference table) and with lakestore,
then checks every reader on every table: lakestore reads Java's table, Java reads lakestore's,
before compaction (level-0 runs, merge-on-read) and after a full compaction by either engine
(lakestore's table is copied, so that each engine compacts the same files)."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.errors import OptionError, SchemaChangeError, UnsupportedTableError
from lakestore.meta.schema_change import RemoveOption, SetOption
from tests._support import sort_rows
from tests.compact._tables import live_files
from tests.interop.conftest import same_rows


def _table(schema: pa.Schema, rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    return pa.table({f.name: list(c) for f, c in zip(schema, columns, strict=True)}, schema=schema)


def both_ways(
    java: Any,
    catalog: lakestore.Catalog,
    warehouse: Path,
    schema: pa.Schema,
    keys: list[str],
    options: dict[str, str],
    commits: Sequence[Sequence[tuple[Any, ...]]],
    expected: Sequence[tuple[Any, ...]] | None = None,
    compacted: Sequence[tuple[Any, ...]] | None = None,
) -> None:
    """Java writes ``db.ref``, lakestore ``db.ours`` (copied to ``db.ours_j``); every engine reads
    every table as Java reads ``db.ref``, before and after full compactions (Java compacts
    ``db.ref`` and ``db.ours_j``, lakestore ``db.ours``). ``expected``/``compacted``: the rows
    Java must read before/after."""
    java.create_table(warehouse, "db.ref", schema, primary_keys=keys, options=options)
    ours = catalog.create_table("db.ours", schema=schema, primary_keys=keys, options=options)
    for rows in commits:
        java.write(warehouse, "db.ref", _table(schema, rows))
        ours.write_arrow(_table(schema, rows))
    reference = java.read(warehouse, "db.ref")
    if expected is not None:
        same_rows(reference, _table(schema, expected), keys)
    assert any(f.level == 0 for f in live_files(catalog.get_table("db.ours")))
    same_rows(catalog.get_table("db.ref").to_arrow(), reference, keys)
    same_rows(catalog.get_table("db.ours").to_arrow(), reference, keys)
    same_rows(java.read(warehouse, "db.ours"), reference, keys)

    shutil.copytree(Path(ours.path), Path(ours.path).parent / "ours_j")
    java.compact(warehouse, "db.ref")
    java.compact(warehouse, "db.ours_j")
    catalog.get_table("db.ours").compact(full=True)
    reference = java.read(warehouse, "db.ref")
    if compacted is not None:
        same_rows(reference, _table(schema, compacted), keys)
    for name in ("db.ref", "db.ours", "db.ours_j"):
        assert all(f.level > 0 for f in live_files(catalog.get_table(name))), name
        same_rows(catalog.get_table(name).to_arrow(), reference, keys)
        same_rows(java.read(warehouse, name), reference, keys)


# -- sequence.field.sort-order ---------------------------------------------------------------------
SEQ = pa.schema([pa.field("id", pa.int64(), nullable=False), ("seq", pa.int64()), ("v", pa.string()), ("n", pa.int64())])
SEQ_COMMITS = [
    [(1, 5, "a", 1), (2, 3, "a", 1), (3, None, "a", 1), (4, 7, "a", None)],
    [(1, 2, "b", None), (2, 9, "b", 2), (3, 4, "b", 2), (4, 7, "b", 2), (5, None, None, 5)],
    [(1, 2, "c", 3), (2, 1, None, 3), (3, None, "c", None), (5, 8, "c", None)],
]


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        # the smallest sequence wins (ties: the newest), a null sequence loses to any value
        ("deduplicate", [(1, 2, "c", 3), (2, 1, None, 3), (3, 4, "b", 2), (4, 7, "b", 2), (5, 8, "c", None)]),
        # rows merge from the largest sequence to the smallest: the last non-null is the smallest's
        ("partial-update", [(1, 2, "c", 3), (2, 1, "a", 3), (3, 4, "b", 2), (4, 7, "b", 2), (5, 8, "c", 5)]),
        ("aggregation", [(1, 2, "c", 3), (2, 1, "a", 3), (3, 4, "b", 2), (4, 7, "b", 2), (5, 8, "c", 5)]),
    ],
)
def test_descending_sequence_field(java, catalog, warehouse, engine, expected):
    options = {"bucket": "2", "sequence.field": "seq", "sequence.field.sort-order": "descending", "merge-engine": engine}
    if engine == "aggregation":
        options["fields.n.aggregate-function"] = "last_non_null_value"
        options["fields.v.aggregate-function"] = "last_non_null_value"
    both_ways(java, catalog, warehouse, SEQ, ["id"], options, SEQ_COMMITS, expected=expected, compacted=expected)


def test_descending_sequence_field_with_writers_interleaved(java, catalog, warehouse):
    options = {"bucket": "1", "sequence.field": "seq", "sequence.field.sort-order": "descending"}
    table = catalog.create_table("db.t", schema=SEQ, primary_keys=["id"], options=options)
    table.write_arrow(_table(SEQ, SEQ_COMMITS[0]))
    java.write(warehouse, "db.t", _table(SEQ, SEQ_COMMITS[1]))
    catalog.get_table("db.t").write_arrow(_table(SEQ, SEQ_COMMITS[2]))
    expected = _table(SEQ, [(1, 2, "c", 3), (2, 1, None, 3), (3, 4, "b", 2), (4, 7, "b", 2), (5, 8, "c", None)])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])
    java.compact(warehouse, "db.t")
    catalog.get_table("db.t").write_arrow(_table(SEQ, [(1, 3, "late", 0), (2, 0, "first", 0)]))
    expected = _table(SEQ, [(1, 2, "c", 3), (2, 0, "first", 0), (3, 4, "b", 2), (4, 7, "b", 2), (5, 8, "c", None)])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    catalog.get_table("db.t").compact(full=True)
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])


# -- ignore-update-before --------------------------------------------------------------------------
KINDED = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()), ("kind", pa.string())])
KINDED_COMMITS = [
    [(1, 10, "+I"), (2, 20, "+I"), (3, 30, "+I")],
    [(1, 10, "-U"), (1, 11, "+U"), (2, 20, "-U"), (3, 30, "-D")],
    [(2, 5, "-U"), (4, 40, "-U"), (5, 50, "+I")],
]


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        # -U rows are dropped when written: key 2 keeps its row, key 4 never appears
        ("deduplicate", [(1, 11, "+U"), (2, 20, "+I"), (5, 50, "+I")]),
        # (-D retracts the sum; last_value retracts to null)
        ("aggregation", [(1, 21, "+U"), (2, 20, "+I"), (3, 0, None), (5, 50, "+I")]),
    ],
)
def test_ignore_update_before(java, catalog, warehouse, engine, expected):
    options = {"bucket": "2", "rowkind.field": "kind", "ignore-update-before": "true", "merge-engine": engine}
    if engine == "aggregation":
        options["fields.v.aggregate-function"] = "sum"
        options["fields.kind.aggregate-function"] = "last_value"
    both_ways(java, catalog, warehouse, KINDED, ["id"], options, KINDED_COMMITS, expected=expected, compacted=expected)


# -- partial-update.remove-record-on-delete --------------------------------------------------------
WIDE = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("a", pa.string()), ("b", pa.int64()), ("c", pa.string()), ("kind", pa.string())]
)
PARTIAL_COMMITS = [
    [(1, "a1", 1, None, "+I"), (2, "a2", None, "c2", "+I"), (3, None, 3, "c3", "+I"), (4, "a4", 4, "c4", "+I")],
    [(1, None, 10, "c1", "+I"), (2, "gone", 2, None, "-D"), (3, "u", 30, None, "-U"), (5, "d5", 5, "d5", "-D")],
    [(2, None, 22, None, "+I"), (3, None, None, "c33", "+I"), (4, "x", 44, None, "-D"), (6, "u6", 6, None, "-U")],
    [(1, "del", None, None, "-D"), (4, None, None, "back", "+I"), (6, None, 66, None, "+I")],
]


def test_partial_update_remove_record_on_delete(java, catalog, warehouse):
    options = {"bucket": "2", "merge-engine": "partial-update", "rowkind.field": "kind", "partial-update.remove-record-on-delete": "true"}
    # merge-on-read: a -D removes the key; the key's later rows merge onto the -D row's values
    # (-U rows change nothing, except that a key's first row initialises it: key 6)
    expected = [(2, "gone", 22, None, "+I"), (3, None, 3, "c33", "+I"), (4, "x", 44, "back", "+I"), (6, "u6", 66, None, "+I")]
    # a full compaction drops the -D rows (no older file to retract), and with them their values
    both_ways(java, catalog, warehouse, WIDE, ["id"], options, PARTIAL_COMMITS, expected=expected, compacted=expected)


def test_partial_update_remove_record_on_delete_across_compactions(java, catalog, warehouse):
    """A -D compacted alone to the top level vanishes: the next insert starts from nothing."""
    options = {"bucket": "1", "merge-engine": "partial-update", "rowkind.field": "kind", "partial-update.remove-record-on-delete": "true"}
    table = catalog.create_table("db.t", schema=WIDE, primary_keys=["id"], options=options)
    table.write_arrow(_table(WIDE, PARTIAL_COMMITS[0]))
    java.write(warehouse, "db.t", _table(WIDE, PARTIAL_COMMITS[1]))
    catalog.get_table("db.t").compact(full=True)
    java.write(warehouse, "db.t", _table(WIDE, PARTIAL_COMMITS[2]))
    catalog.get_table("db.t").write_arrow(_table(WIDE, PARTIAL_COMMITS[3]))
    expected = _table(WIDE, [(2, None, 22, None, "+I"), (3, None, 3, "c33", "+I"), (4, "x", 44, "back", "+I"), (6, "u6", 66, None, "+I")])
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])
    java.compact(warehouse, "db.t")
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])


@pytest.mark.parametrize(
    "extra",
    [{"ignore-delete": "true"}, {"fields.b.sequence-group": "a"}],
    ids=["ignore-delete", "sequence-group"],
)
def test_partial_update_remove_record_on_delete_conflicts(catalog, extra):
    options = {"bucket": "1", "merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true", **extra}
    with pytest.raises(OptionError, match="remove-record-on-delete"):
        catalog.create_table("db.t", schema=WIDE, primary_keys=["id"], options=options).write_arrow(_table(WIDE, PARTIAL_COMMITS[0]))


# -- aggregation.remove-record-on-delete -----------------------------------------------------------
AGG = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("s", pa.int64()),
        ("m", pa.int64()),
        ("l", pa.string()),
        ("kind", pa.string()),
    ]
)
AGG_OPTIONS = {
    "bucket": "2",
    "merge-engine": "aggregation",
    "rowkind.field": "kind",
    "aggregation.remove-record-on-delete": "true",
    "fields.s.aggregate-function": "sum",
    "fields.m.aggregate-function": "max",
    "fields.l.aggregate-function": "listagg",
    "fields.kind.aggregate-function": "last_value",
}
AGG_COMMITS = [
    [(1, 1, 1, "a", "+I"), (2, 2, 2, "b", "+I"), (3, 3, 3, "c", "+I"), (4, 4, 4, "d", "+I")],
    [(1, 10, 0, "x", "+I"), (2, 100, 9, " ", "-D"), (3, 1, 1, "c", "+I"), (5, 5, 5, "e", "-D")],
    [(2, 7, 1, "y", "+I"), (3, 2, 8, "z", "+I"), (4, 40, 40, "q", "-D"), (6, 6, 6, " ", "-D")],
    [(4, 1, None, " ", "+I"), (6, None, 1, " ", "+I")],
]


def test_aggregation_remove_record_on_delete(java, catalog, warehouse):
    # the -D row's values are the accumulator of the key's later rows (sum 100 + 7); a blank
    # listagg value of the -D stays until a non-blank one replaces it
    expected = [
        (1, 11, 1, "a,x", "+I"),
        (2, 107, 9, "y", "+I"),
        (3, 6, 8, "c,c,z", "+I"),
        (4, 41, 40, "q", "+I"),
        (6, 6, 6, " ", "+I"),
    ]
    both_ways(java, catalog, warehouse, AGG, ["id"], AGG_OPTIONS, AGG_COMMITS, expected=expected, compacted=expected)


def test_aggregation_remove_record_on_delete_refusals(catalog):
    with pytest.raises(OptionError, match="ignore-retract"):
        catalog.create_table(
            "db.t", schema=AGG, primary_keys=["id"], options={**AGG_OPTIONS, "fields.s.ignore-retract": "true"}
        ).write_arrow(_table(AGG, AGG_COMMITS[0]))


FIRST_OPTIONS = {**AGG_OPTIONS, "fields.s.aggregate-function": "first_value", "fields.m.aggregate-function": "first_non_null_value"}
FIRST_COMMITS = [
    [(1, 1, None, "a", "+I"), (2, None, None, "b", "+I"), (4, 4, 4, "d", "+I")],
    [(1, 10, 7, "x", "-D"), (2, 20, 8, "y", "-D"), (3, 30, 9, "z", "-D"), (4, 40, 40, "q", "-D")],
    [(1, 100, 70, "u", "+I"), (2, None, None, "v", "+I"), (3, None, 3, "w", "+I"), (5, None, None, "e", "+I")],
    [(2, 5, 5, "t", "+I"), (3, 6, None, "s", "+I"), (5, 5, 5, "f", "-D"), (5, None, 6, "g", "+I")],
]


def test_aggregation_remove_record_on_delete_with_first_value(java, catalog, warehouse):
    """first_value / first_non_null_value are stateful in Paimon: within one merge the first
    (non-null) insert initialises them and a -D does not reset that, so a -D's value stays when
    an insert came before it, else the first insert after it wins."""
    both_ways(java, catalog, warehouse, AGG, ["id"], FIRST_OPTIONS, FIRST_COMMITS)


# -- record-level.expire-time ----------------------------------------------------------------------
NOW = int(time.time())
DAY = 86400


def _stamp(kind: str, seconds: int | None) -> Any:
    if seconds is None:
        return None
    if kind == "int":
        return seconds
    if kind == "bigint-millis":
        return seconds * 1000 + 999
    return dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None)


_TIME_TYPES = {"int": pa.int32(), "bigint-millis": pa.int64(), "timestamp": pa.timestamp("us")}


@pytest.mark.parametrize("kind", list(_TIME_TYPES))
def test_record_level_expire(java, catalog, warehouse, kind):
    """Expired records are dropped by compaction, record by record before the merge (an
    expired newest version lets the older one win); reads before compaction see them all."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", _TIME_TYPES[kind]), ("v", pa.string())])
    old, new = NOW - 10 * DAY, NOW + DAY

    def row(key: int, seconds: int | None, v: str) -> tuple[Any, ...]:
        return (key, _stamp(kind, seconds), v)

    commits = [
        [row(1, new, "a"), row(2, old, "a"), row(3, None, "a"), row(4, new, "a"), row(5, old, "a")],
        [row(2, new, "b"), row(4, old, "b"), row(6, old, "b")],
    ]
    options = {"bucket": "1", "record-level.expire-time": "1 d", "record-level.time-field": "ts"}
    expected = [row(1, new, "a"), row(2, new, "b"), row(3, None, "a"), row(4, old, "b"), row(5, old, "a"), row(6, old, "b")]
    compacted = [row(1, new, "a"), row(2, new, "b"), row(3, None, "a"), row(4, new, "a")]
    both_ways(java, catalog, warehouse, schema, ["id"], options, commits, expected=expected, compacted=compacted)


@pytest.mark.parametrize("stats", ["full", "default"])
@pytest.mark.parametrize("compactor", ["lakestore", "java"])
def test_record_level_expire_rewrites_a_top_level_file(java, catalog, warehouse, compactor, stats):
    """A bucket that is one top-level run is compacted again when the value statistics of a file
    show expired records (Paimon's pickFullCompaction with RecordLevelExpire.isExpireFile).
    Primary-key files carry no value statistics by default: such a file is left as it is."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", pa.int64()), ("v", pa.string())])
    options = {"bucket": "1", "record-level.expire-time": "4 s", "record-level.time-field": "ts"}
    if stats == "full":
        options["fields.ts.stats-mode"] = "full"
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    soon = int(time.time())
    table.write_arrow(_table(schema, [(1, soon, "a"), (2, soon + 3600, "a")]))

    def compact() -> None:
        if compactor == "java":
            java.compact(warehouse, "db.t")
        else:
            catalog.get_table("db.t").compact(full=True)

    compact()
    everything = _table(schema, [(1, soon, "a"), (2, soon + 3600, "a")])
    same_rows(java.read(warehouse, "db.t"), everything, ["id"])
    same_rows(catalog.get_table("db.t").to_arrow(), everything, ["id"])
    time.sleep(max(0.0, soon + 6 - time.time()))
    before = {f.file_name for f in live_files(catalog.get_table("db.t"))}
    compact()
    after = {f.file_name for f in live_files(catalog.get_table("db.t"))}
    expected = _table(schema, [(2, soon + 3600, "a")]) if stats == "full" else everything
    assert before.isdisjoint(after) if stats == "full" else before == after
    same_rows(java.read(warehouse, "db.t"), expected, ["id"])
    same_rows(catalog.get_table("db.t").to_arrow(), expected, ["id"])


def test_record_level_expire_options_are_checked(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", pa.string())])
    with pytest.raises(OptionError, match="time field"):  # as Paimon: when a writer or compaction starts
        table = catalog.create_table("db.a", schema=schema, primary_keys=["id"], options={"record-level.expire-time": "1 d"})
        table.write_arrow(_table(schema, [(1, "x")]))
        table.compact(full=True)
    with pytest.raises(OptionError, match="INT, BIGINT or TIMESTAMP"):
        catalog.create_table(
            "db.b", schema=schema, primary_keys=["id"], options={"record-level.expire-time": "1 d", "record-level.time-field": "ts"}
        )


# -- partial-update.remove-record-on-sequence-group ------------------------------------------------
GROUPS = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("g1", pa.int64()),
        ("a", pa.string()),
        ("b", pa.int64()),
        ("g2", pa.int64()),
        ("c", pa.string()),
        ("f", pa.string()),
        ("kind", pa.string()),
    ]
)
GROUP_OPTIONS = {
    "bucket": "2",
    "merge-engine": "partial-update",
    "rowkind.field": "kind",
    "fields.g1.sequence-group": "a,b",
    "fields.g2.sequence-group": "c",
}
GROUP_COMMITS = [
    [
        (1, 1, "a1", 1, 1, "c1", "f1", "+I"),
        (2, 2, "a2", 2, 2, "c2", None, "+I"),
        (3, 3, "a3", 3, None, None, "f3", "+I"),
        (4, 1, "a4", 4, 4, "c4", "f4", "+I"),
        (5, 5, "a5", 5, 5, "c5", "f5", "+I"),
    ],
    [
        (1, 2, "x", 9, None, None, None, "-D"),  # g1 newer: removes key 1 (its values stay)
        (2, 1, "old", 0, 3, "y", "fy", "-D"),  # g1 older: only g2 retracts
        (3, 3, "u", 7, 1, "z", None, "-U"),  # g1 equal: a, b null; g2 set
        (6, 1, "r", 6, 1, "r", "fr", "-U"),  # a key starting with a retraction
        (5, None, None, None, 9, "d", None, "-D"),  # only g2
    ],
    [
        (1, None, None, None, 2, "c1b", "f1b", "+I"),
        (2, 3, None, 22, 2, "late", None, "+I"),
        (4, 0, "stale", 0, 9, "c4b", None, "-D"),
        (6, 2, "a6", None, None, None, None, "+I"),
    ],
    [
        (4, 5, "del", 5, 1, "x", None, "-D"),  # g1 newer: removes key 4, the last row
        (3, 4, "a3b", None, None, None, None, "+I"),
    ],
    [  # several rows of one key in one commit: merged when the writer flushes
        (7, 1, "a7", 7, 1, "c7", "f7", "+I"),
        (7, 2, "x", 0, None, None, None, "-D"),
        (7, None, None, None, 3, "c7b", None, "+I"),
        (8, 1, "a8", 8, 1, "c8", "f8", "+I"),
        (8, 1, "u8", 0, 0, "u", None, "-U"),
        (8, 0, "old", 1, 2, "c8b", None, "+I"),
        (9, 3, "d9", 9, 3, "d9", None, "-D"),
        (2, 9, "gone", 9, None, None, None, "-D"),
    ],
]


@pytest.mark.parametrize("delete_on", ["g1", None])
def test_partial_update_sequence_group_retractions(java, catalog, warehouse, delete_on):
    """Retractions in sequence groups (Paimon's retractWithSequenceGroup) and, with
    ``partial-update.remove-record-on-sequence-group``, -D rows that remove the whole key."""
    options = dict(GROUP_OPTIONS)
    if delete_on:
        options["partial-update.remove-record-on-sequence-group"] = delete_on
    both_ways(java, catalog, warehouse, GROUPS, ["id"], options, GROUP_COMMITS)


@pytest.mark.parametrize(
    "extra",
    [
        {"partial-update.remove-record-on-sequence-group": "a"},  # not a sequence field
        {"partial-update.remove-record-on-sequence-group": "g1", "ignore-delete": "true"},
    ],
    ids=["not-a-sequence-field", "ignore-delete"],
)
def test_remove_record_on_sequence_group_conflicts(catalog, extra):
    with pytest.raises(OptionError, match="remove-record-on-sequence-group"):
        table = catalog.create_table("db.t", schema=GROUPS, primary_keys=["id"], options={**GROUP_OPTIONS, **extra})
        table.write_arrow(_table(GROUPS, GROUP_COMMITS[0]))


def test_merge_options_alter_as_paimon(catalog):
    """Paimon's SchemaManager: the remove-record options are immutable, ignore-update-before
    may be switched on but not off; sequence.field.sort-order may change."""
    catalog.create_table("db.t", schema=WIDE, primary_keys=["id"], options={"bucket": "1", "merge-engine": "partial-update"})
    for key in ("partial-update.remove-record-on-delete", "aggregation.remove-record-on-delete"):
        with pytest.raises(SchemaChangeError, match=key):
            catalog.alter_table("db.t", [SetOption(key, "true")])
    catalog.alter_table("db.t", [SetOption("ignore-update-before", "true"), SetOption("sequence.field.sort-order", "descending")])
    for change in (SetOption("ignore-update-before", "false"), RemoveOption("ignore-update-before")):
        with pytest.raises(SchemaChangeError, match="ignore-update-before"):
            catalog.alter_table("db.t", [change])
    assert catalog.get_table("db.t").schema.options["ignore-update-before"] == "true"


@pytest.mark.parametrize("case", ["partial-update", "aggregation", "first-value", "sequence-groups"])
def test_remove_record_options_with_writers_interleaved(java, catalog, warehouse, case):
    """Writers and full compactions of both engines take turns on one table; after each step
    both engines read the same rows, and so does a table Java wrote and compacted alike."""
    schema, options, commits = {
        "partial-update": (
            WIDE,
            {"bucket": "2", "merge-engine": "partial-update", "rowkind.field": "kind", "partial-update.remove-record-on-delete": "true"},
            PARTIAL_COMMITS,
        ),
        # (no blank listagg values: a key's lone row is merged by lakestore, which turns a blank
        # listagg value into null, while Paimon hands it on unmerged; not specific to this option)
        "aggregation": (AGG, AGG_OPTIONS, [[(*r[:3], "w" if r[3] == " " else r[3], r[4]) for r in c] for c in AGG_COMMITS]),
        "first-value": (AGG, FIRST_OPTIONS, FIRST_COMMITS),
        "sequence-groups": (GROUPS, {**GROUP_OPTIONS, "partial-update.remove-record-on-sequence-group": "g1"}, GROUP_COMMITS),
    }[case]
    catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    java.create_table(warehouse, "db.ref", schema, primary_keys=["id"], options=options)
    steps = ["lakestore", "java+compact", "lakestore+compact", "java", "lakestore"]
    for rows, step in zip(commits, steps, strict=False):
        data = _table(schema, rows)
        java.write(warehouse, "db.ref", data)
        if step.startswith("java"):
            java.write(warehouse, "db.t", data)
        else:
            catalog.get_table("db.t").write_arrow(data)
        if step.endswith("compact"):
            java.compact(warehouse, "db.ref")
            if step.startswith("java"):
                java.compact(warehouse, "db.t")
            else:
                catalog.get_table("db.t").compact(full=True)
        reference = java.read(warehouse, "db.ref")
        same_rows(java.read(warehouse, "db.t"), reference, ["id"])
        same_rows(catalog.get_table("db.t").to_arrow(), reference, ["id"])


@pytest.mark.parametrize("engine", ["aggregation", "deduplicate"])
def test_ignore_delete_drops_retractions_on_write(java, catalog, warehouse, engine):
    """Paimon 2.0's RowKindFilter drops -U/-D rows before the merge engine sees them, also for
    aggregation (lakestore's aggregation retracted them)."""
    options = {"bucket": "2", "rowkind.field": "kind", "ignore-delete": "true", "merge-engine": engine}
    if engine == "aggregation":
        options["fields.v.aggregate-function"] = "sum"
        options["fields.kind.aggregate-function"] = "last_value"
    expected = [(1, 21 if engine == "aggregation" else 11, "+U"), (2, 20, "+I"), (3, 30, "+I"), (5, 50, "+I")]
    both_ways(java, catalog, warehouse, KINDED, ["id"], options, KINDED_COMMITS, expected=expected, compacted=expected)


@pytest.mark.parametrize(
    ("schema", "options", "rows"),
    [
        (WIDE, {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}, PARTIAL_COMMITS[0]),
        (AGG, AGG_OPTIONS, AGG_COMMITS[0]),
        (GROUPS, {**GROUP_OPTIONS, "partial-update.remove-record-on-sequence-group": "g1"}, GROUP_COMMITS[0]),
        (GROUPS, GROUP_OPTIONS, GROUP_COMMITS[1]),  # retractions in sequence groups
    ],
    ids=["partial-update", "aggregation", "sequence-group", "group-retractions"],
)
def test_lookup_changelog_writes_with_seeding_deletes_are_refused(catalog, schema, options, rows):
    """Paimon's lookup writers compact every commit, which decides when a -D and the values it
    seeds are dropped: lakestore refuses such writes by name (Java's tables stay readable)."""
    options = {**options, "bucket": "1", "rowkind.field": "kind", "changelog-producer": "lookup"}
    table = catalog.create_table("db.t", schema=schema, primary_keys=["id"], options=options)
    with pytest.raises(UnsupportedTableError, match="lookup") as info:
        table.write_arrow(_table(schema, rows))
    assert "changelog-producer" in info.value.options


@pytest.mark.parametrize("producer", ["input", "full-compaction"])
@pytest.mark.parametrize("case", ["partial-update", "aggregation", "first-value", "sequence-group", "group-retractions", "descending"])
def test_changelog_of_merge_options(java, catalog, warehouse, case, producer):
    """The input and full-compaction changelogs (``$audit_log`` read by Java) of a table lakestore
    wrote equal those of the table Java wrote (full compaction after every commit by each)."""
    blank_free = [[(*r[:3], "w" if r[3] == " " else r[3], r[4]) for r in c] for c in AGG_COMMITS]
    schema, options, commits = {
        "partial-update": (
            WIDE,
            {"merge-engine": "partial-update", "rowkind.field": "kind", "partial-update.remove-record-on-delete": "true"},
            PARTIAL_COMMITS,
        ),
        "aggregation": (AGG, AGG_OPTIONS, blank_free),
        "first-value": (AGG, FIRST_OPTIONS, FIRST_COMMITS),
        "sequence-group": (GROUPS, {**GROUP_OPTIONS, "partial-update.remove-record-on-sequence-group": "g1"}, GROUP_COMMITS),
        "group-retractions": (GROUPS, GROUP_OPTIONS, GROUP_COMMITS),
        "descending": (SEQ, {"sequence.field": "seq", "sequence.field.sort-order": "descending"}, SEQ_COMMITS),
    }[case]
    options = {**options, "bucket": "1", "changelog-producer": producer}
    java.create_table(warehouse, "db.ref", schema, primary_keys=["id"], options=options)
    catalog.create_table("db.ours", schema=schema, primary_keys=["id"], options=options)
    for rows in commits:
        java.write(warehouse, "db.ref", _table(schema, rows))
        catalog.get_table("db.ours").write_arrow(_table(schema, rows))
        if producer == "full-compaction":
            java.compact(warehouse, "db.ref")
            catalog.get_table("db.ours").compact(full=True)
    theirs = java.changes(warehouse, "db.ref", 0, len(java.snapshots(warehouse, "db.ref")))
    ours = java.changes(warehouse, "db.ours", 0, len(java.snapshots(warehouse, "db.ours")))
    assert theirs.num_rows > 0
    assert sort_rows(ours.select(theirs.column_names)) == sort_rows(theirs)
