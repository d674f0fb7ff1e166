"""The merge options of Paimon 2.0 against a record-by-record model of Paimon's merge functions
(hypothesis; one merge of key-sorted rows): ``partial-update.remove-record-on-delete`` and
``aggregation.remove-record-on-delete`` (PartialUpdateMergeFunction / AggregateMergeFunction.add
with initRow, a lone record handed on unmerged as ReducerMergeFunctionWrapper does), and
``sequence.field.sort-order`` = descending (the order UserDefinedSeqComparator gives: the
smallest sequence last, nulls first). Interop with Paimon Java: tests/interop/test_java_merge_options.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakestore.format.arrow_ops import sort_indices
from lakestore.format.kv import DELETE, INSERT, SEQUENCE_NUMBER, UPDATE_AFTER, UPDATE_BEFORE, VALUE_KIND
from lakestore.format.types import parse_type
from lakestore.merge.aggregation import AggregationEngine
from lakestore.merge.engine import DeduplicateEngine
from lakestore.merge.partial_update import PartialUpdateEngine

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KINDS = st.sampled_from([INSERT, INSERT, UPDATE_AFTER, UPDATE_BEFORE, DELETE])
ROWS = st.lists(
    st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(-3, 3)), st.one_of(st.none(), st.sampled_from(["x", "y", " "])), KINDS),
    max_size=14,
)


def _input(rows: list[tuple[Any, ...]]) -> pa.Table:
    """Key-sorted rows (stable: arrival order within a key) with sequence numbers in arrival order."""
    table = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "a": pa.array([r[1] for r in rows], pa.int64()),
            "b": pa.array([r[2] for r in rows], pa.string()),
            SEQUENCE_NUMBER: pa.array(range(len(rows)), pa.int64()),
            VALUE_KIND: pa.array([r[3] for r in rows], pa.int8()),
        }
    )
    return table.take(sort_indices(table, ["id", SEQUENCE_NUMBER]))


def _by_key(table: pa.Table) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for row in table.to_pylist():
        out.setdefault(row["id"], []).append(row)
    return out


def _retract(kind: int) -> bool:
    return kind in (UPDATE_BEFORE, DELETE)


def _partial_update_model(records: list[dict[str, Any]]) -> tuple[Any, Any, int]:
    if len(records) == 1:
        r = records[0]
        return r["a"], r["b"], r[VALUE_KIND]
    row: dict[str, Any] = {"a": None, "b": None}
    filled = met_insert = deleted = False
    for r in records:
        deleted = False
        if _retract(r[VALUE_KIND]):
            if not filled:
                row, filled = {"a": r["a"], "b": r["b"]}, True
            if r[VALUE_KIND] == DELETE:
                row, deleted = {"a": r["a"], "b": r["b"]}, True
            continue
        for name in ("a", "b"):
            if r[name] is not None:
                row[name] = r[name]
        met_insert = filled = True
    return row["a"], row["b"], DELETE if deleted or not met_insert else INSERT


def _aggregation_model(records: list[dict[str, Any]]) -> tuple[Any, Any, int]:
    """sum over ``a`` (retractable), last_non_null_value over ``b``."""
    if len(records) == 1:
        r = records[0]
        return r["a"], r["b"], r[VALUE_KIND]
    total: Any = None
    last: Any = None
    deleted = False
    for r in records:
        deleted = r[VALUE_KIND] == DELETE
        if deleted:
            total, last = r["a"], r["b"]
            continue
        if r[VALUE_KIND] == UPDATE_BEFORE:
            if r["a"] is not None:
                total = -r["a"] if total is None else total - r["a"]
            if r["b"] is not None:
                last = None  # Paimon's last_non_null_value retracts to null
            continue
        if r["a"] is not None:
            total = r["a"] if total is None else total + r["a"]
        if r["b"] is not None:
            last = r["b"]
    return total, last, DELETE if deleted else INSERT


def _merged(table: pa.Table) -> dict[int, tuple[Any, Any, int]]:
    return {r["id"]: (r["a"], r["b"], r[VALUE_KIND]) for r in table.to_pylist()}


def _plain(merged: dict[int, tuple[Any, Any, int]]) -> dict[int, tuple[Any, Any, int]]:
    """+U as +I: lakestore's merges write every added row as +I (readers see no difference)."""
    return {key: (a, b, INSERT if kind == UPDATE_AFTER else kind) for key, (a, b, kind) in merged.items()}


@SETTINGS
@given(ROWS)
def test_partial_update_remove_record_on_delete_is_paimons_merge(rows):
    engine = PartialUpdateEngine(value_columns=["a", "b"], sequence_groups={}, ignore_delete=False, remove_record_on_delete=True)
    table = engine.prepare_input(_input(rows))
    expected = {key: _partial_update_model(records) for key, records in _by_key(table).items()}
    assert _plain(_merged(engine.merge(table, ["id"]))) == _plain(expected)


@SETTINGS
@given(ROWS)
def test_aggregation_remove_record_on_delete_is_paimons_merge(rows):
    engine = AggregationEngine(
        value_types={"a": parse_type("BIGINT"), "b": parse_type("STRING")},
        functions={"a": "sum", "b": "last_non_null_value"},
        ignore_retract={},
        delimiters={},
        default_function=None,
        remove_record_on_delete=True,
    )
    # -U rows left out: lakestore's last_non_null_value ignores a retraction (test_properties.py)
    table = engine.prepare_input(_input([r for r in rows if r[3] != UPDATE_BEFORE]))
    expected = {key: _aggregation_model(records) for key, records in _by_key(table).items()}
    assert _plain(_merged(engine.merge(table, ["id"]))) == _plain(expected)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 4))), min_size=1, max_size=14))
def test_descending_sequence_order_keeps_the_smallest_sequence(rows):
    table = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "seq": pa.array([r[1] for r in rows], pa.int64()),
            SEQUENCE_NUMBER: pa.array(range(len(rows)), pa.int64()),
            VALUE_KIND: pa.array(np.zeros(len(rows), dtype=np.int8)),
        }
    )
    ordered = table.take(sort_indices(table, ["id", "seq", SEQUENCE_NUMBER], descending={"seq"}))
    merged = DeduplicateEngine().merge(ordered, ["id"])
    for key, records in _by_key(table).items():
        valued = [r for r in records if r["seq"] is not None]
        # the smallest sequence wins, the newest among equal ones; a null sequence only alone
        if valued:
            smallest = min(r["seq"] for r in valued)
            want = max(r[SEQUENCE_NUMBER] for r in valued if r["seq"] == smallest)
        else:
            want = max(r[SEQUENCE_NUMBER] for r in records)
        got = [r for r in merged.to_pylist() if r["id"] == key]
        assert [r[SEQUENCE_NUMBER] for r in got] == [want]


# -- sequence groups with retractions ----------------------------------------------------------
GROUP_ROWS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.one_of(st.none(), st.integers(0, 3)),  # g1 (group of a)
        st.one_of(st.none(), st.integers(0, 3)),  # g2 (group of c)
        st.one_of(st.none(), st.sampled_from(["p", "q"])),  # a, c and f take this value
        KINDS,
    ),
    max_size=12,
)


def _group_model(records: list[dict[str, Any]], delete_groups: tuple[str, ...]) -> dict[str, Any]:
    """Paimon's PartialUpdateMergeFunction.add / retractWithSequenceGroup, record by record
    (fields in index order g1, a, g2, c, f; nulls lowest)."""
    names = ("g1", "a", "g2", "c", "f")
    if len(records) == 1:
        return {**{n: records[0][n] for n in names}, VALUE_KIND: records[0][VALUE_KIND]}
    groups = {"g1": ("a",), "g2": ("c",)}
    row: dict[str, Any] = dict.fromkeys(names)
    filled = met_insert = deleted = False
    for r in records:
        deleted = False
        retract = _retract(r[VALUE_KIND])
        if retract and not filled:
            row, filled = {n: r[n] for n in names}, True
        reset = False
        for seq, members in groups.items():
            if r[seq] is None:
                continue
            if row[seq] is not None and r[seq] < row[seq]:
                continue
            if retract and r[VALUE_KIND] == DELETE and seq in delete_groups:
                row, deleted, reset = {n: r[n] for n in names}, True, True
                break
            row[seq] = r[seq]
            for m in members:
                row[m] = None if retract else r[m]
        if reset or retract:
            continue
        if r["f"] is not None:
            row["f"] = r["f"]
        met_insert = filled = True
    return {**row, VALUE_KIND: DELETE if deleted or not met_insert else INSERT}


@SETTINGS
@given(GROUP_ROWS, st.sampled_from([(), ("g1",), ("g1", "g2")]))
def test_sequence_group_retractions_are_paimons_merge(rows, delete_on):
    engine = PartialUpdateEngine(
        value_columns=["g1", "a", "g2", "c", "f"],
        sequence_groups={"g1": ("a",), "g2": ("c",)},
        ignore_delete=False,
        remove_record_on_sequence_group=delete_on,
    )
    table = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "g1": pa.array([r[1] for r in rows], pa.int64()),
            "a": pa.array([r[3] for r in rows], pa.string()),
            "g2": pa.array([r[2] for r in rows], pa.int64()),
            "c": pa.array([None if r[3] is None else r[3] + "c" for r in rows], pa.string()),
            "f": pa.array([None if r[3] is None else r[3] + "f" for r in rows], pa.string()),
            SEQUENCE_NUMBER: pa.array(range(len(rows)), pa.int64()),
            VALUE_KIND: pa.array([r[4] for r in rows], pa.int8()),
        }
    )
    table = engine.prepare_input(table.take(sort_indices(table, ["id", SEQUENCE_NUMBER])))
    merged = {r["id"]: {k: v for k, v in r.items() if k not in ("id", SEQUENCE_NUMBER)} for r in engine.merge(table, ["id"]).to_pylist()}
    # only merges with retractions take this path (without, see test_properties.py)
    if not any(_retract(k) for k in table.column(VALUE_KIND).to_pylist()):
        return
    expected = {key: _group_model(records, delete_on) for key, records in _by_key(table).items()}
    plain = {k: {**v, VALUE_KIND: INSERT if v[VALUE_KIND] == UPDATE_AFTER else v[VALUE_KIND]} for k, v in merged.items()}
    assert plain == {k: {**v, VALUE_KIND: INSERT if v[VALUE_KIND] == UPDATE_AFTER else v[VALUE_KIND]} for k, v in expected.items()}
