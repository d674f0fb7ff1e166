"""Maintenance by one engine while the other writes: Paimon Java 2.0 and lakestore on one table.

Both engines commit under Paimon's JDBC catalog lock (as in ``test_mixed_engines.py``), through
one Paimon Java JVM (``java_oracle()``) and lakestore in threads of this process:

- Snapshot expiration: one engine writes a primary-key table commit after commit (with a full
  compaction every few commits, so that expiration has data files to delete), tags a snapshot
  and moves a consumer, while the other expires snapshots (``retain_min=2``, ``retain_max=3``)
  over and over. Afterwards every retained snapshot, the tag and the consumer's snapshot read
  completely, the rows a model of the commits says, in both engines; every file they name is on
  disk; ``table.maintenance.check()`` / ``lakestore check`` find nothing lost; orphan cleanup (dry run, then
  for real) lists the same files, only files no snapshot or tag references (a planted one among
  them), and everything still reads afterwards.
- Dedicated compaction: one engine full-compacts a primary-key table and an append table while
  the other writes to the same partitions. A commit that conflicts is retried or reported as
  ``CommitConflictError`` (lakestore) / a conflict exception (Java); the final rows equal a model
  of the writes that landed, in both engines, none lost or twice. The conflict made certain:
  a lakestore compaction planned before Java's full compaction commits after it and raises
  ``CommitConflictError``, deleting its output files; a lakestore writer whose own compaction
  loses to Java's lands its rows and drops that compaction.
- Deletion-vector primary-key tables in the compaction scenarios.
- A consumer file Paimon Java is rewriting in place (empty for a moment) when lakestore expires:
  lakestore reads it again instead of expiring the snapshots its reader needs.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import lakestore
from lakestore.cli import main as cli_main
from lakestore.compact import compact_bucket, select_buckets
from lakestore.errors import CommitConflictError, CorruptMetadataError
from tests.oracle.java_driver import JavaOracleError, encode_table, java_oracle
from tests.postgres import Postgres

pytestmark = pytest.mark.oracle

SCHEMA = pa.schema([pa.field("p", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
IDENT = "db.t"
Rows = dict[tuple[str, int], str]


@pytest.fixture(scope="module")
def java() -> Any:
    return java_oracle()


def _batch(k: int, writer: str) -> tuple[pa.Table, Rows]:
    """Commit ``k``: three new keys spread over both partitions and an update of key ("a", 0)."""
    keys = [("a", 0)] + [("ab"[j % 2], 1 + 3 * k + j) for j in range(3)]
    rows = {key: f"{writer}{k}" for key in keys}
    data = pa.table(
        {"p": [p for p, _ in rows], "id": [i for _, i in rows], "v": list(rows.values())},
        schema=SCHEMA,
    )
    return data, rows


def _rows(data: pa.Table) -> Rows:
    return {(r["p"], r["id"]): r["v"] for r in data.to_pylist()}


def _sorted(data: pa.Table) -> list[tuple[str, int, str]]:
    return sorted((r["p"], r["id"], r["v"]) for r in data.to_pylist())


def _setup(java: Any, postgres: Postgres, warehouse: Path, options: dict[str, str], *, primary_keys: bool = True) -> lakestore.Table:
    """The table, created by Java's JDBC catalog; lakestore opens it with the same catalog lock."""
    key = f"k{abs(hash(str(warehouse))) % 10**9}"
    java.use_catalog(warehouse, {"metastore": "jdbc", "uri": postgres.uri, "jdbc.user": "lake", "lock.enabled": "true", "catalog-key": key})
    java.create_table(warehouse, IDENT, SCHEMA, primary_keys=("p", "id") if primary_keys else (), partition_keys=("p",), options=options)
    return lakestore.Catalog(str(warehouse), options={**postgres.lock_options(), "catalog-key": key}).get_table(IDENT)


def _java_write(java: Any, warehouse: Path, data: pa.Table) -> int:
    """One batch commit by Paimon Java, as a ``write-only`` writer (its commit neither compacts
    nor expires: the other engine does that). Returns the new snapshot's id."""
    columns, rows = encode_table(data)
    return int(
        java.request("write", warehouse=str(warehouse), identifier=IDENT, columns=columns, rows=rows, options={"write-only": "true"})[
            "snapshot_id"
        ]
    )


class Writer(threading.Thread):
    """Runs ``body`` in a thread; ``result()`` re-raises what it raised. The body calls ``pace()``
    after each commit: it lets the maintenance loop (``while writer.next_run():``) start its next
    run and waits until it has, so that the body's next commit overlaps that run."""

    def __init__(self, body: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.body = body
        self.error: BaseException | None = None
        self._commit_landed = threading.Semaphore(0)
        self._run_started = threading.Semaphore(0)

    def pace(self) -> None:
        self._commit_landed.release()
        self._run_started.acquire(timeout=60)

    def next_run(self) -> bool:
        """Wait for the writer's next commit (or its end); True: run maintenance again."""
        while not self._commit_landed.acquire(timeout=0.05):
            if not self.is_alive():
                return False
        self._run_started.release()
        return True

    def run(self) -> None:
        try:
            self.body()
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            self.error = e

    def result(self) -> None:
        self.join(timeout=240)
        assert not self.is_alive()
        if self.error is not None:
            raise self.error


# -- snapshot expiration -----------------------------------------------------------------------

COMMITS = 8
NO_WRITER_COMPACTION = {"bucket": "2", "num-sorted-run.compaction-trigger": "100", "num-sorted-run.stop-trigger": "200"}


class History:
    """The model: the rows after each commit and the APPEND snapshot each commit landed as."""

    def __init__(self) -> None:
        self.model: Rows = {}
        self.landed: list[tuple[int, Rows]] = []
        self.tag: tuple[str, int] | None = None
        self.consumer_moves = 0

    def add(self, snapshot_id: int, rows: Rows) -> None:
        self.model = {**self.model, **rows}
        self.landed.append((snapshot_id, self.model))

    def at(self, snapshot_id: int) -> Rows:
        state: Rows = {}
        for landed, rows in self.landed:
            if landed <= snapshot_id:
                state = rows
        return state


def _lakestore_writes(table: lakestore.Table, history: History, pace: Callable[[], None]) -> None:
    for k in range(COMMITS):
        data, rows = _batch(k, "lakestore")
        snapshot = table.write_arrow(data)
        assert snapshot is not None and snapshot.commit_kind == "APPEND"
        history.add(snapshot.id, rows)
        _tag(k, snapshot.id, history, lambda name, sid: table.manage.create_tag(name, sid))
        pace()
        _compact(k, lambda: table.compact(full=True))
        _consumer(k, snapshot.id, table, history)


def _java_writes(java: Any, warehouse: Path, table: lakestore.Table, history: History, pace: Callable[[], None]) -> None:
    for k in range(COMMITS):
        data, rows = _batch(k, "java")
        snapshot_id = _java_write(java, warehouse, data)
        history.add(snapshot_id, rows)
        _tag(k, snapshot_id, history, lambda name, sid: java.create_tag(warehouse, IDENT, name, sid))
        pace()
        _compact(k, lambda: java.compact(warehouse, IDENT))
        _consumer(k, snapshot_id, table, history)


def _tag(k: int, snapshot_id: int, history: History, tag: Callable[[str, int], object]) -> None:
    """Tag commit 2's snapshot before the next expiration run starts: Paimon Java writes a tag
    file in place (``overwriteFileUtf8``), and an expiration listing tags meanwhile may meet an
    empty file: lakestore's then stops with ``CorruptMetadataError`` (nothing deleted)."""
    if k == 2:
        tag("early", snapshot_id)
        history.tag = ("early", snapshot_id)


def _compact(k: int, compact: Callable[[], object]) -> None:
    if k % 3 == 2:  # the files of the commits before are deleted from here on: expiration removes them
        compact()


def _consumer(k: int, snapshot_id: int, table: lakestore.Table, history: History) -> None:
    """A streaming reader that has read up to commit 3, later up to commit 6 (Paimon's consumer
    file: the next snapshot it reads); expiration keeps that snapshot and the ones after it."""
    if k in (3, 6):
        table.manage.reset_consumer("reader", snapshot_id)
        history.consumer_moves += 1


def _verify(java: Any, warehouse: Path, table: lakestore.Table, history: History) -> None:
    table = lakestore.Catalog(str(warehouse)).get_table(IDENT)
    retained = [s.id for s in table.snapshots()]
    assert [s["id"] for s in java.snapshots(warehouse, IDENT)] == retained
    consumer = table.manage.consumers()["reader"]
    assert consumer in retained and retained[0] <= consumer
    assert history.landed[-1][0] in retained
    for snapshot_id in retained:
        expected = history.at(snapshot_id)
        assert _rows(table.to_arrow(snapshot_id=snapshot_id)) == expected, snapshot_id
        assert _rows(java.read(warehouse, IDENT, options={"scan.snapshot-id": snapshot_id})) == expected, snapshot_id
    assert history.tag is not None
    name, tagged = history.tag
    assert [(t.name, t.snapshot_id) for t in table.manage.tags()] == [(name, tagged)]
    assert tagged < retained[0]  # the tagged snapshot itself expired: only the tag holds its files
    assert _rows(table.to_arrow(tag=name)) == history.at(tagged)
    assert _rows(java.read(warehouse, IDENT, options={"scan.tag-name": name})) == history.at(tagged)
    # every file a retained snapshot or the tag reads is on disk
    for snapshot in [*table.snapshots(), *(t.snapshot for t in table.manage.tags())]:
        for f in table.store.live_files(snapshot):
            assert os.path.exists(os.path.join(table.path, f.partition_path, f"bucket-{f.bucket}", f.file_name)), f
    check = table.maintenance.check()
    assert check.ok, check
    assert cli_main(["-w", str(warehouse), "-q", "check", IDENT]) == 0


def _referenced(table: lakestore.Table) -> set[str]:
    """Data files (relative paths) a retained snapshot or a tag reads."""
    out: set[str] = set()
    for snapshot in [*table.snapshots(), *(t.snapshot for t in table.manage.tags())]:
        for f in table.store.live_files(snapshot):
            out.add(os.path.join(f.partition_path, f"bucket-{f.bucket}", f.file_name))
    return out


def _orphans(java: Any, warehouse: Path, table: lakestore.Table, history: History) -> None:
    table = lakestore.Catalog(str(warehouse)).get_table(IDENT)
    planted = os.path.join("p=a", "bucket-0", "data-00000000-0000-0000-0000-000000000000-0.parquet")
    Path(table.path, planted).write_bytes(b"not referenced by anything")
    later = int(time.time() * 1000) + 60_000
    dry = table.maintenance.remove_orphan_files(older_than_ms=later, dry_run=True)
    assert dry.deleted == (planted,)  # expiration left no file behind; nothing referenced is listed
    assert planted not in _referenced(table)
    assert os.path.exists(os.path.join(table.path, planted))  # a dry run deletes nothing
    done = table.maintenance.remove_orphan_files(older_than_ms=later)
    assert sorted(done.deleted) == sorted(dry.deleted)
    assert not os.path.exists(os.path.join(table.path, planted))
    _verify(java, warehouse, table, history)  # nothing a snapshot, tag or consumer needs went


def test_java_expires_snapshots_while_lakestore_writes(java, postgres, tmp_path):
    warehouse = tmp_path / "wh"
    table = _setup(java, postgres, warehouse, NO_WRITER_COMPACTION)
    history = History()
    writer = Writer(lambda: _lakestore_writes(table, history, writer.pace))
    writer.start()
    expired = 0
    while writer.next_run():
        expired += java.expire(warehouse, IDENT, retain_min=2, retain_max=3)
    writer.result()
    expired += java.expire(warehouse, IDENT, retain_min=2, retain_max=3)
    assert expired > 0 and history.consumer_moves == 2
    _verify(java, warehouse, table, history)
    _orphans(java, warehouse, table, history)


def test_lakestore_expires_snapshots_while_java_writes(java, postgres, tmp_path):
    warehouse = tmp_path / "wh"
    table = _setup(java, postgres, warehouse, NO_WRITER_COMPACTION)
    history = History()
    writer = Writer(lambda: _java_writes(java, warehouse, table, history, writer.pace))
    writer.start()
    results = []
    while writer.next_run():
        results.append(table.maintenance.expire_snapshots(num_retained_min=2, num_retained_max=3))
    writer.result()
    results.append(table.maintenance.expire_snapshots(num_retained_min=2, num_retained_max=3))
    assert sum(len(r.expired_snapshot_ids) for r in results) > 0 and history.consumer_moves == 2
    assert sum(r.deleted_data_files for r in results) > 0  # the files Java's compactions replaced
    _verify(java, warehouse, table, history)
    _orphans(java, warehouse, table, history)


# -- dedicated compaction ----------------------------------------------------------------------

WRITES = 4
# the writers compact too (after every second sorted run), so their compactions and the dedicated
# ones remove the same files: one of each pair must lose
PK_TABLE = {"bucket": "2", "num-sorted-run.compaction-trigger": "2"}
TABLES = {
    "primary-key": PK_TABLE,
    "append": {"bucket": "-1"},
    # both engines read a deletion-vector table from level 1 up: the final full compaction puts
    # every row there
    "deletion-vectors": {**PK_TABLE, "deletion-vectors.enabled": "true"},
}


class Landed:
    """The model of the rows that landed: key -> value (primary keys) or every row (append)."""

    def __init__(self, primary_keys: bool) -> None:
        self.primary_keys = primary_keys
        self.rows: list[tuple[str, int, str]] = []

    def add(self, data: pa.Table) -> None:
        self.rows += [(r["p"], r["id"], r["v"]) for r in data.to_pylist()]

    def expected(self) -> list[tuple[str, int, str]]:
        if not self.primary_keys:
            return sorted(self.rows)
        latest = {(p, i): v for p, i, v in self.rows}
        return sorted((p, i, v) for (p, i), v in latest.items())


def _final(java: Any, warehouse: Path, landed: Landed) -> lakestore.Table:
    table = lakestore.Catalog(str(warehouse)).get_table(IDENT)
    assert _sorted(table.to_arrow()) == landed.expected()
    assert _sorted(java.read(warehouse, IDENT)) == landed.expected()
    assert table.maintenance.check().ok
    return table


@pytest.mark.parametrize("kind", list(TABLES))
def test_java_compacts_while_lakestore_writes(java, postgres, tmp_path, kind):
    warehouse = tmp_path / "wh"
    primary_keys = kind != "append"
    table = _setup(java, postgres, warehouse, TABLES[kind], primary_keys=primary_keys)
    landed = Landed(primary_keys)

    def writes() -> None:
        for k in range(WRITES):
            data, _ = _batch(k, "lakestore")
            # lakestore's own compaction losing to Java's is dropped; its rows land regardless
            assert table.write_arrow(data) is not None
            landed.add(data)
            writer.pace()

    writer = Writer(writes)
    writer.start()
    compactions, conflicts = 0, 0
    while writer.next_run():
        try:
            java.compact(warehouse, IDENT)
            compactions += 1
        except JavaOracleError as e:  # Java's compaction lost to lakestore's: Paimon gives up
            assert "conflict" in str(e).lower(), e
            conflicts += 1
    writer.result()
    java.compact(warehouse, IDENT)
    table = _final(java, warehouse, landed)
    assert compactions + conflicts > 1
    kinds = [s.commit_kind for s in table.snapshots()]
    assert kinds.count("APPEND") == WRITES and kinds[-1] == "COMPACT"


@pytest.mark.parametrize("kind", list(TABLES))
def test_lakestore_compacts_while_java_writes(java, postgres, tmp_path, kind):
    warehouse = tmp_path / "wh"
    primary_keys = kind != "append"
    table = _setup(java, postgres, warehouse, TABLES[kind], primary_keys=primary_keys)
    landed = Landed(primary_keys)

    def writes() -> None:
        for k in range(WRITES):
            data, _ = _batch(k, "java")
            columns, rows = encode_table(data)
            for _ in range(5):
                try:
                    # a streaming commit: retried with its identifier, it lands once (Paimon
                    # skips an identifier its user already committed)
                    java.request(
                        "write",
                        warehouse=str(warehouse),
                        identifier=IDENT,
                        columns=columns,
                        rows=rows,
                        commit_user="java-writer",
                        commit_identifier=k,
                    )
                    break
                except JavaOracleError as e:  # Java's own compaction lost to lakestore's
                    assert "conflict" in str(e).lower(), e
            else:
                raise AssertionError("Java's write never landed")
            landed.add(data)
            writer.pace()

    writer = Writer(writes)
    writer.start()
    compactions, conflicts = 0, 0
    while writer.next_run():
        try:
            compactions += len(table.compact(full=True))
        except CommitConflictError:
            conflicts += 1
    writer.result()
    table.compact(full=True)
    table = _final(java, warehouse, landed)
    assert compactions + conflicts > 0
    kinds = [s.commit_kind for s in table.snapshots()]
    assert kinds.count("APPEND") == WRITES and kinds[-1] == "COMPACT"


@pytest.mark.parametrize("kind", list(TABLES))
def test_lakestore_compaction_that_loses_to_java_raises_and_leaves_nothing(java, postgres, tmp_path, kind):
    """The race above made certain: lakestore plans and writes a full compaction, Paimon Java's
    full compaction of the same files commits first, then lakestore commits: CommitConflictError,
    its output files deleted, the table as Java left it in both engines."""
    warehouse = tmp_path / "wh"
    primary_keys = kind != "append"
    table = _setup(java, postgres, warehouse, TABLES[kind], primary_keys=primary_keys)
    landed = Landed(primary_keys)
    for k in range(3):
        data, _ = _batch(k, "java")
        _java_write(java, warehouse, data)
        landed.add(data)
    planned = table.latest_snapshot()
    messages = [
        m for p, b in select_buckets(table.store, planned, None) if (m := compact_bucket(table.store, p, b, full=True, snapshot=planned))
    ]
    names = {f.file_name for m in messages for f in m.compact_after} - {f.file_name for m in messages for f in m.compact_before}
    outputs = [path for path in Path(table.path).rglob("data-*") if path.name in names]
    assert messages and names and len(outputs) == len(names)
    java.compact(warehouse, IDENT)
    with pytest.raises(CommitConflictError):
        table.new_commit(commit_user="lakestore-compactor").commit(messages)
    assert not any(o.exists() for o in outputs)  # provably unreferenced: deleted
    table = _final(java, warehouse, landed)
    kinds = [s.commit_kind for s in table.snapshots()]
    assert kinds == ["APPEND"] * 3 + ["COMPACT"] and table.snapshots()[-1].commit_user != "lakestore-compactor"
    assert table.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000, dry_run=True).deleted == ()


@pytest.mark.parametrize("kind", ["primary-key", "deletion-vectors"])
def test_lakestore_writer_whose_compaction_loses_to_java_keeps_its_rows(java, postgres, tmp_path, kind):
    """A lakestore writer compacts its bucket as it writes; Paimon Java's full compaction commits
    between lakestore's planning and its publish. The rows land (APPEND), the writer's compaction
    is dropped with its output files, and nothing is lost or twice in either engine."""
    warehouse = tmp_path / "wh"
    _setup(java, postgres, warehouse, TABLES[kind])
    table = lakestore.Catalog(str(warehouse)).get_table(IDENT)  # one thread: no lock needed here
    landed = Landed(True)
    for k in range(2):
        data, _ = _batch(k, "java")
        _java_write(java, warehouse, data)
        landed.add(data)
    data, _ = _batch(2, "lakestore")
    write = table.new_write(commit_user="lakestore-writer")
    write.write_arrow(data)
    messages = write.prepare_commit()
    names = {f.file_name for m in messages for f in m.compact_after} - {f.file_name for m in messages for f in m.compact_before}
    outputs = [path for path in Path(table.path).rglob("data-*") if path.name in names]
    assert names and len(outputs) == len(names)  # the writer compacted (trigger: 2 sorted runs)
    steps: list[str] = []

    def java_compacts_first(step: str) -> None:
        steps.append(step)
        if len(steps) == 1:
            java.compact(warehouse, IDENT)

    snapshots = table.new_commit(commit_user="lakestore-writer", hook=java_compacts_first).commit(messages)
    write.close()
    assert [s.commit_kind for s in snapshots] == ["APPEND"]
    landed.add(data)
    assert not any(o.exists() for o in outputs)
    java.compact(warehouse, IDENT)  # both engines read deletion-vector tables from level 1 up
    table = _final(java, warehouse, landed)
    kinds = [s.commit_kind for s in table.snapshots()]
    assert kinds == ["APPEND", "APPEND", "COMPACT", "APPEND", "COMPACT"]
    assert table.maintenance.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 60_000, dry_run=True).deleted == ()


def test_lakestore_expiration_waits_for_a_consumer_file_java_is_rewriting(java, postgres, tmp_path):
    """Paimon Java moves a streaming reader's position by rewriting ``consumer/consumer-<id>`` in
    place (``LocalFileIO.overwriteFileUtf8``: truncate, then write). lakestore's expiration meeting
    that file empty reads it again, as Paimon's ``Consumer.fromPath`` does, instead of taking it
    for no consumer and expiring the snapshots the reader reads next; a file that never parses
    stops expiration (``CorruptMetadataError``) with nothing expired."""
    warehouse = tmp_path / "wh"
    table = _setup(java, postgres, warehouse, NO_WRITER_COMPACTION)
    history = History()
    for k in range(5):
        data, rows = _batch(k, "java")
        history.add(_java_write(java, warehouse, data), rows)
        if k == 2:
            java.compact(warehouse, IDENT)  # files that expiring snapshot 1..3 would delete
    position = history.landed[1][0]
    consumer = Path(table.path, "consumer", "consumer-flink")
    consumer.parent.mkdir(exist_ok=True)
    consumer.write_bytes(b"")  # truncated, not yet written
    finish = threading.Timer(0.5, lambda: consumer.write_text(json.dumps({"nextSnapshot": position})))
    finish.start()
    try:
        result = table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1)
    finally:
        finish.join()
    assert result.expired_snapshot_ids == tuple(range(1, position))
    for snapshot_id in [s.id for s in table.snapshots()]:
        assert snapshot_id >= position
        assert _rows(java.read(warehouse, IDENT, options={"scan.snapshot-id": snapshot_id})) == history.at(snapshot_id)
        assert _rows(table.to_arrow(snapshot_id=snapshot_id)) == history.at(snapshot_id)

    consumer.write_text('{"nextSnap')  # a writer that died halfway
    before = [s.id for s in table.snapshots()]
    with pytest.raises(CorruptMetadataError, match="consumer-flink"):
        table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=1)
    assert [s.id for s in table.snapshots()] == before
