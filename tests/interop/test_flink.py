"""Flink as a real Paimon producer and consumer: Apache Flink 2.0 with Paimon 2.0.0's connector
(tests/oracle/flink_driver.py), checkpointing every second.

a. One streaming Flink job writes six primary-key tables at once (changelog producers input,
   lookup and full-compaction; lookup with deletion vectors; a first-row and a partial-update
   table) from a bounded datagen
   source whose keys repeat, churned through a Top-N so that keys are updated, deleted and come
   back. While the job runs and after it ends, lakestore's ``Table.stream()`` follows each table
   (one follower from the start, one started with ``start="full"`` on an APPEND snapshot
   mid-job): every change is
   delivered once (the live stream equals the stored changelog read afterwards, and folding it
   never inserts a key twice nor retracts a row that is not there), and the folded state equals
   lakestore's batch read and Flink's batch read.
b. The reverse: lakestore commits upserts and deletes to a ``changelog-producer=input`` table
   while a Flink streaming SELECT follows it: Flink sees every row lakestore wrote, with its row
   kind, and ends in the same state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.scan.changes import ROW_KIND_COLUMN, StreamScan
from tests.oracle.flink_driver import FlinkOracle, FlinkOracleError, flink_oracle

pytestmark = pytest.mark.flink

Key = tuple[Any, ...]
Row = tuple[Any, ...]

ROWS = 320  # datagen rows, at ROWS_PER_SECOND: the job writes for about 8 s (8 checkpoints)
ROWS_PER_SECOND = 40
KEYS = 30
TOP_N = 12  # the churned stream keeps the 12 most recently updated keys: the others are deleted
JOB_TIMEOUT_S = 150

TABLE_COLUMNS = ["k", "v", "s"]
PARTIAL_COLUMNS = ["k", "a", "b"]


@dataclass(frozen=True)
class FlinkTable:
    name: str
    ddl_options: dict[str, str]
    insert: str  # the SELECT feeding it
    columns: list[str] = field(default_factory=lambda: list(TABLE_COLUMNS))


TABLES = [
    FlinkTable("t_input", {"bucket": "2", "changelog-producer": "input"}, "SELECT k, seq, s FROM churn"),
    FlinkTable("t_lookup", {"changelog-producer": "lookup"}, "SELECT k, seq, s FROM churn"),  # dynamic bucket
    FlinkTable(
        "t_full",
        {"bucket": "2", "changelog-producer": "full-compaction", "full-compaction.delta-commits": "2"},
        "SELECT k, seq, s FROM churn",
    ),
    FlinkTable(  # lakestore reads Paimon 2.0's deletion vectors (levels >= 1, vectors applied)
        "t_dv", {"bucket": "2", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"}, "SELECT k, seq, s FROM churn"
    ),
    FlinkTable("t_first", {"bucket": "1", "merge-engine": "first-row", "changelog-producer": "lookup"}, "SELECT k, seq, s FROM src"),
    FlinkTable(
        "t_partial",
        {"bucket": "2", "merge-engine": "partial-update", "changelog-producer": "lookup"},
        "SELECT k, CASE WHEN MOD(seq, 2) = 0 THEN seq END, CASE WHEN MOD(seq, 2) = 1 THEN s END FROM src",
        columns=list(PARTIAL_COLUMNS),
    ),
]


def _ddl(table: FlinkTable) -> str:
    types = {"k": "INT", "v": "BIGINT", "s": "STRING", "a": "BIGINT", "b": "STRING"}
    cols = ", ".join(f"{c} {types[c]}" for c in table.columns)
    options = ", ".join(f"'{k}' = '{v}'" for k, v in table.ddl_options.items())
    return f"CREATE TABLE db.{table.name} ({cols}, PRIMARY KEY (k) NOT ENFORCED) WITH ({options})"


SOURCE_DDL = f"""CREATE TEMPORARY TABLE src (k INT, seq BIGINT, s STRING) WITH (
    'connector' = 'datagen', 'rows-per-second' = '{ROWS_PER_SECOND}', 'number-of-rows' = '{ROWS}',
    'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '{KEYS}',
    'fields.seq.kind' = 'sequence', 'fields.seq.start' = '1', 'fields.seq.end' = '{ROWS}',
    'fields.s.length' = '4')"""
# the newest row of each key, then only the TOP_N most recently updated keys: a key that falls
# out is deleted (-D), one that is updated again comes back
LATEST_VIEW = (
    "CREATE TEMPORARY VIEW latest AS SELECT k, seq, s FROM "
    "(SELECT k, seq, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY seq DESC) AS rn FROM src) WHERE rn = 1"
)
CHURN_VIEW = (
    "CREATE TEMPORARY VIEW churn AS SELECT k, seq, s FROM "
    f"(SELECT k, seq, s, ROW_NUMBER() OVER (ORDER BY seq DESC) AS rn FROM latest) WHERE rn <= {TOP_N}"
)


# -- folding a changelog ----------------------------------------------------------------------
def fold(changes: Iterable[tuple[str, Row]], *, strict: bool, state: dict[Key, Row] | None = None) -> dict[Key, Row]:
    """Applies changes (row kind, row whose first value is the key) to a key -> row state.
    Retractions must match the row that is there; ``strict`` also refuses +I/+U of a key that is
    there (a change delivered twice, or a missing retraction)."""
    state = dict(state or {})
    for i, (kind, row) in enumerate(changes):
        key = row[:1]
        if kind in ("-U", "-D"):
            assert state.get(key) == row, f"change {i}: {kind}{row} retracts {state.get(key)}"
            del state[key]
        else:
            assert kind in ("+I", "+U"), kind
            if strict:
                assert key not in state, f"change {i}: {kind}{row} but {state[key]} is there"
            state[key] = row
    return state


def arrow_changes(table: pa.Table, columns: Sequence[str]) -> list[tuple[str, Row]]:
    kinds = table.column(ROW_KIND_COLUMN).to_pylist()
    values = zip(*(table.column(c).to_pylist() for c in columns), strict=True) if table.num_rows else iter(())
    return list(zip(kinds, values, strict=True))


def arrow_state(table: pa.Table, columns: Sequence[str]) -> dict[Key, Row]:
    rows = zip(*(table.column(c).to_pylist() for c in columns), strict=True) if table.num_rows else iter(())
    return {row[:1]: row for row in rows}


def flink_state(rows: Sequence[Sequence[Any]]) -> dict[Key, Row]:
    """A Flink batch read ([kind, values...]; Paimon reports +U for a merged row): key -> row."""
    assert all(r[0] in ("+I", "+U") for r in rows), rows
    state = {tuple(r[1:2]): tuple(r[1:]) for r in rows}
    assert len(state) == len(rows), "Flink's batch read returned a key twice"
    return state


@dataclass
class Follower:
    """A lakestore stream over one table, polled while Flink writes it."""

    stream: StreamScan
    columns: list[str]
    batches: list[tuple[int | None, list[tuple[str, Row]]]] = field(default_factory=list)  # (snapshot id or None=full, changes)
    start_snapshot: int = 0  # the snapshot of the initial full read (0: none, the table was empty)

    def __post_init__(self) -> None:
        self.start_snapshot = self.stream.next_snapshot - 1  # start="full": the latest snapshot, then on

    def poll_all(self) -> None:
        while True:
            full = self.start_snapshot > 0 and not self.batches
            snapshot = None if full else self.stream.next_snapshot
            batch = self.stream.poll()
            if batch is None:
                return
            self.batches.append((snapshot, arrow_changes(batch, self.columns)))

    def changes(self) -> list[tuple[str, Row]]:
        return [c for _, batch in self.batches for c in batch]

    def snapshot_ids(self) -> list[int]:
        return [s for s, _ in self.batches if s is not None]


@pytest.fixture(scope="module")
def flink() -> FlinkOracle:
    return flink_oracle()


def _run_job(flink: FlinkOracle, job: str, on_tick: Callable[[], None]) -> None:
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while True:
        on_tick()
        status = flink.status(job)
        if status == "FINISHED":
            return
        if status in ("FAILED", "CANCELED") or time.monotonic() > deadline:
            try:
                flink.wait(job, timeout=5)
            except FlinkOracleError as exc:
                raise AssertionError(f"the Flink job ended {status}: {exc}") from exc
            raise AssertionError(f"the Flink job is {status} after {JOB_TIMEOUT_S} s:\n{flink.stderr_tail()}")
        time.sleep(0.3)


@dataclass
class FlinkRun:
    catalog: lakestore.Catalog
    from_start: dict[str, Follower]
    mid_job: dict[str, Follower]
    seen_while_running: dict[str, int]  # snapshots each from-start follower read before the job ended


@pytest.fixture(scope="module")
def flink_run(flink: FlinkOracle, tmp_path_factory: pytest.TempPathFactory) -> FlinkRun:
    """Flink writes the tables in one streaming job; lakestore follows each of them."""
    warehouse = tmp_path_factory.mktemp("flink") / "wh"
    flink.use_warehouse(warehouse)
    flink.sql("CREATE DATABASE IF NOT EXISTS db", *(_ddl(t) for t in TABLES), mode="stream")
    flink.sql(SOURCE_DDL, LATEST_VIEW, CHURN_VIEW, mode="stream")
    catalog = lakestore.Catalog(str(warehouse))
    tables = {t.name: catalog.get_table(f"db.{t.name}") for t in TABLES}
    from_start = {t.name: Follower(tables[t.name].stream(start="full"), t.columns) for t in TABLES}
    mid_job: dict[str, Follower] = {}

    def tick() -> None:
        for follower in from_start.values():
            follower.poll_all()
        for t in TABLES:
            if t.name not in mid_job and (latest := tables[t.name].latest_snapshot()) is not None and latest.id >= 3:
                # start on an APPEND snapshot (the commit's new level-0 files, before the
                # compaction snapshot that carries their lookup/full-compaction changelog)
                follower = Follower(tables[t.name].stream(start="full"), t.columns)
                if tables[t.name].snapshot(follower.start_snapshot).commit_kind == "APPEND":
                    mid_job[t.name] = follower
        for follower in mid_job.values():
            follower.poll_all()

    job = flink.submit(*(f"INSERT INTO db.{t.name} {t.insert}" for t in TABLES))
    _run_job(flink, job, tick)
    seen_while_running = {name: len(f.snapshot_ids()) for name, f in from_start.items()}
    tick()  # everything committed before the job finished
    return FlinkRun(catalog, from_start, mid_job, seen_while_running)


@pytest.mark.parametrize("spec", TABLES, ids=[t.name for t in TABLES])
def test_lakestore_follows_flink_writes(flink: FlinkOracle, flink_run: FlinkRun, spec: FlinkTable) -> None:
    table = flink_run.catalog.get_table(f"db.{spec.name}")
    follower = flink_run.from_start[spec.name]
    latest = table.latest_snapshot()
    assert latest is not None and latest.id >= 4, "the job committed too few snapshots to follow"
    # every snapshot read once, in order
    assert follower.start_snapshot == 0
    assert follower.snapshot_ids() == list(range(1, latest.id + 1))
    assert flink_run.seen_while_running[spec.name] >= 3, "lakestore did not follow the table while the job ran"
    # the live stream delivered exactly the changelog stored in the table
    stored = arrow_changes(table.read_changes(from_snapshot_id=0, columns=spec.columns), spec.columns)
    live = follower.changes()
    assert live == stored
    assert any(kind in ("-U", "-D") for kind, _ in live) or spec.name in ("t_first",), "no retraction reached the stream"

    state = fold(live, strict=True)
    batch = arrow_state(table.to_arrow(columns=spec.columns), spec.columns)
    assert state == batch
    flink_rows = flink.query(f"SELECT {', '.join(spec.columns)} FROM db.{spec.name}")
    assert flink_state(flink_rows) == batch

    # the follower test_stream_started_mid_job checks: started on an APPEND snapshot, read on
    mid = flink_run.mid_job.get(spec.name)
    assert mid is not None, "no follower started on an APPEND snapshot while the job ran"
    assert mid.start_snapshot >= 3 and mid.batches[0][0] is None
    assert table.snapshot(mid.start_snapshot).commit_kind == "APPEND"
    assert mid.snapshot_ids() == list(range(mid.start_snapshot + 1, latest.id + 1))


# Paimon's streaming read (Flink, scan.mode from-snapshot-full / latest-full) of a table whose
# changelog comes from compaction reads the starting snapshot without the files compaction has
# not produced a changelog for yet (lookup: level 0; full-compaction: all but the last level):
# their changes arrive later, through the changelog of the compaction that moves them up. Seen
# on t_partial started at APPEND snapshot 3: Flink's full phase returned snapshot 2's 25
# compacted rows (k=2: a=28), then snapshot 4's changelog -U(2, 28, '50c7') +U(2, 42, '50c7');
# t_full started at APPEND snapshot 5: the 12 rows of compaction snapshot 3, then snapshot 6's
# full-compaction changelog. lakestore's start="full" does the same (ChangeReader.full_phase_levels).
@pytest.mark.parametrize("spec", TABLES, ids=[t.name for t in TABLES])
def test_stream_started_mid_job(flink_run: FlinkRun, spec: FlinkTable) -> None:
    """A stream that starts with start="full" on an APPEND snapshot while the job runs (checked
    in test_lakestore_follows_flink_writes) delivers each change once and ends in the table's state."""
    table = flink_run.catalog.get_table(f"db.{spec.name}")
    mid = flink_run.mid_job[spec.name]
    initial = fold(mid.batches[0][1], strict=True)
    changes = [c for _, batch in mid.batches[1:] for c in batch]
    assert fold(changes, strict=True, state=initial) == arrow_state(table.to_arrow(columns=spec.columns), spec.columns)


def test_flink_follows_lakestore_writes(flink: FlinkOracle, tmp_path: pytest.TempPathFactory) -> None:
    """lakestore commits upserts and deletes (``rowkind.field``) to a ``changelog-producer=input``
    table; a Flink streaming SELECT (scan.mode latest-full) sees each row with its kind."""
    warehouse = tmp_path / "wh"  # type: ignore[operator]
    catalog = lakestore.Catalog(str(warehouse))
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.int64()), ("op", pa.string())])
    table = catalog.create_table(
        "db.lw", schema=schema, primary_keys=["k"], options={"bucket": "2", "changelog-producer": "input", "rowkind.field": "op"}
    )

    def commit(rows: list[tuple[int, int, str]]) -> None:
        k, v, op = zip(*rows, strict=True)
        table.write_arrow(pa.table({"k": list(k), "v": list(v), "op": list(op)}, schema=schema))

    commit([(k, k, "+I") for k in range(20)])
    flink.use_warehouse(warehouse)
    collector = flink.collect("SELECT k, v, op FROM db.lw /*+ OPTIONS('scan.mode' = 'latest-full') */")
    try:
        initial = collector.poll_until(lambda rows: len(rows) >= 20, timeout=JOB_TIMEOUT_S)
        assert sorted(tuple(r[1:]) for r in initial) == [(k, k, "+I") for k in range(20)]
        assert all(r[0] in ("+I", "+U") for r in initial)
        commits = [
            [(k, 100 + k, "+U") for k in range(0, 8)],  # upserts
            [(k, k, "-D") for k in range(8, 14)],  # deletes
            [(k, k, "+I") for k in range(20, 26)] + [(k, 200 + k, "-D") for k in (0, 1)],  # inserts, deletes
            [(k, 300 + k, "+I") for k in (0, 8, 20)] + [(k, 300 + k, "+U") for k in (2, 21)],  # re-inserts, upserts
        ]
        for rows in commits:
            commit(rows)
            time.sleep(0.2)
        expected = 20 + sum(len(c) for c in commits)
        rows = collector.poll_until(lambda rows: len(rows) >= expected, timeout=JOB_TIMEOUT_S)
        time.sleep(2)  # nothing more may come
        collector.poll()
        rows = list(collector.rows)
    finally:
        collector.close()
    assert len(rows) == expected, rows[20:]
    # Flink read every change lakestore committed, with its row kind
    stored = table.read_changes(from_snapshot_id=1, columns=["k", "v", "op"])
    lakestore_changes = sorted((kind, k, v, op) for kind, (k, v, op) in arrow_changes(stored, ["k", "v", "op"]))
    assert sorted(tuple(r) for r in rows[20:]) == lakestore_changes
    # the state Flink folds (upserts replace; deletes name the key) is lakestore's and Flink's batch read
    state: dict[Key, Row] = {}
    for kind, k, v, op in rows:
        if kind in ("-U", "-D"):
            state.pop((k,), None)
        else:
            state[(k,)] = (k, v, op)
    batch = arrow_state(table.to_arrow(), ["k", "v", "op"])
    assert state == batch
    assert flink_state(flink.query("SELECT k, v, op FROM db.lw")) == batch
