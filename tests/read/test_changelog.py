"""Changelog producers and reads over time, against a plain dictionary model."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lakestore
from lakestore.errors import SnapshotNotFoundError

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("op", pa.string())])
_counter = itertools.count()

# A commit: list of (key, value or None for delete).
commits_strategy = st.lists(
    st.lists(st.tuples(st.integers(0, 6), st.one_of(st.none(), st.integers(0, 50))), min_size=1, max_size=8),
    min_size=1,
    max_size=5,
)


def _table(tmp_path, producer: str, engine: str = "deduplicate", **extra: str) -> lakestore.Table:
    catalog = lakestore.Catalog(str(tmp_path / "wh"))
    catalog.create_database("db", exist_ok=True)
    options = {"bucket": "2", "changelog-producer": producer, "merge-engine": engine, "write-buffer-size": "4 kb", **extra}
    if engine == "deduplicate":
        options["rowkind.field"] = "op"
    if engine == "aggregation":
        options["fields.v.aggregate-function"] = "sum"
    return catalog.create_table(f"db.t{next(_counter)}", schema=SCHEMA, primary_keys=["id"], options=options)


def _write(table: lakestore.Table, commit: list[tuple[int, int | None]]) -> None:
    # ``op`` is the rowkind field of deduplicate tables; for aggregation it is plain data, kept
    # constant so that only ``v`` changes.
    deletes = "rowkind.field" in table.schema.options
    nulls = table.schema.options.get("merge-engine") in ("partial-update", "first-row")
    values = [v if v is not None or nulls else 0 for _, v in commit]
    rows = {"id": [k for k, _ in commit], "v": values, "op": ["-D" if v is None and deletes else "+U" for _, v in commit]}
    table.write_arrow(pa.table(rows, schema=SCHEMA))


def _apply(state: dict[int, int], commit: list[tuple[int, int | None]], engine: str) -> dict[int, int]:
    """The model: deduplicate deletes on None; partial-update keeps the old value on None
    (null); first-row keeps the first row; aggregation sums (None counts as 0)."""
    new = dict(state)
    for key, value in commit:
        if engine == "aggregation":
            new[key] = new.get(key, 0) + (value or 0)
        elif engine == "partial-update":
            new[key] = value if value is not None else new.get(key)
        elif engine == "first-row":
            new.setdefault(key, value)
        elif value is None:
            new.pop(key, None)
        else:
            new[key] = value
    return new


def _diff(before: dict[int, int], after: dict[int, int], *, dedupe: bool, keys: set[int] | None = None) -> list[tuple[str, int, int]]:
    """The changelog between two states; ``keys`` restricts it to the keys a commit touched."""
    out = []
    for key in sorted((set(before) | set(after)) if keys is None else keys):
        if key in before and key not in after:
            out.append(("-D", key, before[key]))
        elif key in after and key not in before:
            out.append(("+I", key, after[key]))
        elif key in after and (not dedupe or before[key] != after[key]):
            out += [("-U", key, before[key]), ("+U", key, after[key])]
    return out


def _changes(table: lakestore.Table, from_id: int, to_id: int) -> list[tuple[str, int, int]]:
    rows = table.read_changes(from_snapshot_id=from_id, to_snapshot_id=to_id, columns=["id", "v"]).to_pylist()
    return sorted((r["_row_kind"], r["id"], r["v"]) for r in rows)


def _assert_legal_transitions(changes: list[dict]) -> None:
    present: dict[int, bool] = {}
    for row in changes:
        key, kind = row["id"], row["_row_kind"]
        state = present.get(key, False)
        if kind == "+I":
            assert not state, f"+I on existing key {key}"
            present[key] = True
        elif kind == "-U":
            assert state, f"-U without a prior value for key {key}"
            present[key] = False
        elif kind == "+U":
            assert not state, f"+U without a preceding -U for key {key}"
            present[key] = True
        else:
            assert state, f"-D without a prior value for key {key}"
            present[key] = False


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commits=commits_strategy, engine=st.sampled_from(["deduplicate", "aggregation", "partial-update", "first-row"]))
def test_lookup_changelog_matches_model(tmp_path_factory, commits, engine) -> None:
    table = _table(tmp_path_factory.mktemp("lookup"), "lookup", engine)
    state: dict[int, int] = {}
    for commit in commits:
        before_id = table.latest_snapshot().id if table.latest_snapshot() else 0
        _write(table, commit)
        after = _apply(state, commit, engine)
        latest = table.latest_snapshot().id if table.latest_snapshot() else 0
        touched = {k for k, _ in commit}
        if engine == "first-row":
            touched -= set(state)  # later rows of an existing key are dropped when written
        assert _changes(table, before_id, latest) == sorted(_diff(state, after, dedupe=False, keys=touched))
        state = after
    assert {r["id"]: r["v"] for r in table.to_arrow().to_pylist()} == state
    _assert_legal_transitions(table.read_changes(from_snapshot_id=0).to_pylist())


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# first-row takes only the none and lookup producers (Paimon's SchemaValidation; create_table refuses it)
@given(commits=commits_strategy, engine=st.sampled_from(["deduplicate", "aggregation", "partial-update"]))
def test_full_compaction_changelog_matches_model(tmp_path_factory, commits, engine) -> None:
    table = _table(tmp_path_factory.mktemp("full"), "full-compaction", engine)
    state: dict[int, int] = {}
    for commit in commits:
        before_id = table.latest_snapshot().id if table.latest_snapshot() else 0
        _write(table, commit)
        table.compact(full=True)
        after = _apply(state, commit, engine)
        latest = table.latest_snapshot().id if table.latest_snapshot() else 0
        # as Paimon's full-compaction producer (row-deduplicate off): -U/+U for every key a new
        # record reached, even when its value did not change; nothing for the other keys
        touched = {k for k, _ in commit}
        assert _changes(table, before_id, latest) == sorted(_diff(state, after, dedupe=False, keys=touched))
        state = after
    _assert_legal_transitions(table.read_changes(from_snapshot_id=0).to_pylist())


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commits=commits_strategy)
def test_input_changelog_is_the_input(tmp_path_factory, commits) -> None:
    table = _table(tmp_path_factory.mktemp("input"), "input")
    expected = []
    for commit in commits:
        _write(table, commit)
        expected += [("-D", k, 0) if v is None else ("+U", k, v) for k, v in commit]
    latest = table.latest_snapshot().id if table.latest_snapshot() else 0
    assert _changes(table, 0, latest) == sorted(expected)


def test_full_compaction_delta_commits_triggers_changelog(tmp_path) -> None:
    table = _table(tmp_path, "full-compaction", **{"full-compaction.delta-commits": "2"})
    write = table.new_write(commit_user="u")
    commit = table.new_commit(commit_user="u")
    kinds = []
    for i in range(4):
        write.write_arrow(pa.table({"id": [i], "v": [i], "op": ["+I"]}, schema=SCHEMA))
        kinds.append([s.commit_kind for s in commit.commit(write.prepare_commit(), i)])
    assert kinds == [["APPEND"], ["APPEND", "COMPACT"], ["APPEND"], ["APPEND", "COMPACT"]]
    assert _changes(table, 0, table.latest_snapshot().id) == [("+I", i, i) for i in range(4)]


def test_none_producer_reads_append_deltas(tmp_path) -> None:
    table = _table(tmp_path, "none")
    _write(table, [(1, 10), (2, 20)])
    _write(table, [(1, 11), (2, None)])
    first, second = 1, 2
    assert _changes(table, 0, first) == [("+I", 1, 10), ("+I", 2, 20)] or _changes(table, 0, first) == [("+U", 1, 10), ("+U", 2, 20)]
    assert sorted(k for k, _, _ in _changes(table, first, second)) == ["+U", "-D"]


def test_stream_then_consumer_restart_sees_each_change_once(tmp_path) -> None:
    table = _table(tmp_path, "input")
    _write(table, [(1, 1), (2, 2)])
    scan = table.stream(consumer_id="job", columns=["id", "v"])
    seen = [r for batch in scan for r in batch.to_pylist()]
    assert sorted((r["_row_kind"], r["id"]) for r in seen) == [("+I", 1), ("+I", 2)]
    scan.checkpoint()
    _write(table, [(3, 3)])
    _write(table, [(1, None)])
    # The consumer "crashes" after reading one snapshot without a checkpoint, then restarts.
    crashed = table.stream(consumer_id="job", columns=["id", "v"])
    assert crashed.poll() is not None
    restarted = table.stream(consumer_id="job", columns=["id", "v"])
    changes = [(r["_row_kind"], r["id"]) for batch in restarted for r in batch.to_pylist()]
    assert changes == [("+U", 3), ("-D", 1)]
    assert restarted.checkpoint() == table.latest_snapshot().id + 1
    assert table.manage.consumers() == {"job": table.latest_snapshot().id + 1}
    assert list(table.stream(consumer_id="job")) == []


def test_stream_from_latest_and_from_snapshot(tmp_path) -> None:
    table = _table(tmp_path, "input")
    _write(table, [(1, 1)])
    _write(table, [(2, 2)])
    assert list(table.stream(start="latest")) == []
    from_two = [r["id"] for b in table.stream(snapshot_id=2) for r in b.to_pylist()]
    assert from_two == [2]
    assert [r["id"] for b in table.stream(timestamp_ms=0) for r in b.to_pylist()] == [1, 2]


def test_watermark_is_stored(tmp_path) -> None:
    table = _table(tmp_path, "none")
    snapshot = table.write_arrow(pa.table({"id": [1], "v": [1], "op": ["+I"]}, schema=SCHEMA), watermark=1234)
    assert snapshot.watermark == 1234
    assert table.snapshot(snapshot.id).to_dict()["watermark"] == 1234


def test_read_changes_of_expired_snapshot_is_typed(tmp_path) -> None:
    table = _table(tmp_path, "input")
    _write(table, [(1, 1)])
    with pytest.raises(SnapshotNotFoundError):
        table.read_changes(from_snapshot_id=0, to_snapshot_id=5)


def test_changelog_producer_needs_primary_key(tmp_path) -> None:
    catalog = lakestore.Catalog(str(tmp_path))
    catalog.create_database("db")
    with pytest.raises(lakestore.OptionError):
        catalog.create_table("db.a", schema=SCHEMA, options={"changelog-producer": "input"})
