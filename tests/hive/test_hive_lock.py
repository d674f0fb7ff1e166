"""HiveCatalogLock on the session's real Hive Metastore: Paimon's back-off, timeout and message;
snapshot publish, table creation and schema changes wait for the table's lock; several processes
commit through it (every commit once, ids contiguous); a holder killed with SIGKILL is freed by
the metastore's reaper while the others wait; a long section keeps its lock by heartbeating."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import lakestore
from lakestore.catalog import FileSystemCatalog
from lakestore.errors import LockAcquireTimeoutError
from lakestore.io.fileio import LocalFileIO
from lakestore.io.hive_lock import HiveCatalogLock, hive_lock_requested, lock_target
from tests.hms import TXN_TIMEOUT_S, Metastore

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = pa.schema([("id", pa.int64()), ("worker", pa.int32())])


def _lock(metastore: Metastore, **options: str) -> HiveCatalogLock:
    return HiveCatalogLock.from_options(metastore.options(**options))


def _db() -> str:
    return f"lk_{uuid.uuid4().hex[:10]}"


def _worker(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.hive.hive_worker", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _expect(proc: subprocess.Popen, prefix: str, timeout: float = 60.0) -> str:
    assert proc.stdout is not None
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(proc.stdout.readline() if proc.stdout else ""), daemon=True)
    reader.start()
    reader.join(timeout)
    line = result[0] if result else ""
    assert line.startswith(prefix), (
        f"expected {prefix!r}, got {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None and proc.stderr else ''}"
    )
    return line


def test_lock_ids_name_the_table_and_the_option_selects_the_lock():
    assert lock_target("hive.db.t") == ("db", "t")
    assert lock_target("hive./wh/db.db/t/branch/branch-dev") == ("db", "t$branch_dev")
    assert lock_target("hive.s3://bucket/wh/db.db/t") == ("db", "t")
    assert hive_lock_requested({"lock.enabled": "true", "metastore": "hive"})
    assert hive_lock_requested({"lock.enabled": "true", "lock.type": "hive"})
    assert not hive_lock_requested({"lock.enabled": "true", "metastore": "hive", "lock.type": "jdbc"})
    assert not hive_lock_requested({"metastore": "hive"})


def test_waits_for_the_holder_and_times_out_with_paimons_message(metastore: Metastore):
    holder = _lock(metastore)
    impatient = _lock(metastore, **{"lock-check-max-sleep": "100 ms", "lock-acquire-timeout": "600 ms"})
    db = _db()  # a lock on a database and table the metastore does not know is granted (Paimon locks before creating)
    with holder.hold(db, "t"), holder.hold(db, "t"):  # reentrant within a thread
        started = time.monotonic()
        with pytest.raises(LockAcquireTimeoutError) as raised:
            impatient.run_with_lock(f"hive.{db}.t", lambda: None)
        assert 0.5 < time.monotonic() - started < 5
        assert re.search(
            rf"Acquire lock failed for table {db}\.t \(lockId=\d+\) after \d+ms\. Final lock state: WAITING", str(raised.value)
        )
        with impatient.hold(db, "other"):  # another table is not blocked
            pass
        waited: list[float] = []
        patient = _lock(metastore, **{"lock-check-max-sleep": "200 ms"})
        contender = threading.Thread(target=lambda: waited.append(_timed(lambda: patient.run_with_lock(f"hive.{db}.t", lambda: None))))
        contender.start()
        time.sleep(1.0)
        assert contender.is_alive()  # still waiting
    contender.join(10)
    assert not contender.is_alive() and 0.9 < waited[0] < 3.0
    # the timed-out request was unlocked, not left WAITING in front of others
    assert _timed(lambda: impatient.run_with_lock(f"hive.{db}.t", lambda: None)) < 1.0


def _timed(fn) -> float:
    started = time.monotonic()
    fn()
    return time.monotonic() - started


def test_publish_create_and_alter_wait_for_the_table_lock(metastore: Metastore, tmp_path: Path):
    catalog = lakestore.Catalog(
        str(tmp_path / "wh"), options=metastore.options(**{"lock.enabled": "true", "lock-check-max-sleep": "100 ms"})
    )
    assert type(catalog.file_io) is LocalFileIO and isinstance(catalog.publisher.lock, HiveCatalogLock)
    assert catalog.lock is catalog.publisher.lock  # create/alter hold the lock the publishes re-enter
    db = _db()
    catalog.create_database(db)
    other = _lock(metastore)
    table = catalog.create_table(f"{db}.t", schema=SCHEMA)
    for name, action in (
        ("write", lambda: table.write_arrow(pa.table({"id": [1], "worker": pa.array([0], pa.int32())}))),
        ("alter", lambda: catalog.alter_table(f"{db}.t", [lakestore.SetOption("snapshot.num-retained.max", "20")])),
        ("create", lambda: catalog.create_table(f"{db}.u", schema=SCHEMA)),
    ):
        target = "u" if name == "create" else "t"
        errors: list[BaseException] = []
        thread = threading.Thread(target=_capture, args=(action, errors))
        with other.hold(db, target):
            thread.start()
            time.sleep(0.8)
            assert thread.is_alive(), f"{name} did not wait for the table lock"
        thread.join(15)
        assert not thread.is_alive() and not errors, (name, errors)
    assert table.latest_snapshot().id == 1 and catalog.get_table(f"{db}.t").schema.id == 1 and catalog.table_exists(f"{db}.u")


def _capture(fn, errors: list[BaseException]) -> None:
    try:
        fn()
    except BaseException as exc:
        errors.append(exc)


def _committing_table(metastore: Metastore, tmp_path: Path, options: dict[str, str], warehouse: str | None = None) -> tuple[str, str, str]:
    warehouse = warehouse or str(tmp_path / "wh")
    catalog = lakestore.Catalog(warehouse, options=options)
    db = _db()
    catalog.create_database(db)
    catalog.create_table(f"{db}.t", schema=SCHEMA)
    return warehouse, db, f"{db}.t"


def _check_commits(metastore: Metastore, warehouse: str, identifier: str, options: dict[str, str], workers: int, commits: int) -> None:
    table = lakestore.Catalog(warehouse, options=options).get_table(identifier)
    snapshots = table.snapshots()
    assert [s.id for s in snapshots] == list(range(1, len(snapshots) + 1))  # contiguous (appends and their compactions)
    assert sum(1 for s in snapshots if s.commit_kind == "APPEND") == workers * commits  # every commit once
    rows = table.to_arrow()
    assert sorted(rows["id"].to_pylist()) == sorted(w * 100_000 + i for w in range(workers) for i in range(commits))


def test_processes_commit_through_the_lock(metastore: Metastore, tmp_path: Path):
    options = metastore.options(**{"lock.enabled": "true", "lock-check-max-sleep": "200 ms"})
    warehouse, db, identifier = _committing_table(metastore, tmp_path, options)
    workers, commits = 4, 8
    procs = [_worker("commit", json.dumps(options), warehouse, identifier, str(w), str(commits)) for w in range(workers)]
    for p in procs:
        _expect(p, "ready")
    started = time.monotonic()
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    elapsed = time.monotonic() - started
    print(f"{workers} processes x {commits} commits through HiveCatalogLock: {workers * commits / elapsed:.1f} commits/s")
    _check_commits(metastore, warehouse, identifier, options, workers, commits)


def test_a_killed_holder_is_released_by_the_reaper(metastore: Metastore, tmp_path: Path):
    options = metastore.options(**{"lock.enabled": "true", "lock-check-max-sleep": "500 ms"})
    warehouse, db, identifier = _committing_table(metastore, tmp_path, options)
    # the holder heartbeats every second: its lock stays alive until the kill
    holder = _worker("hold", json.dumps({**options, "lock.heartbeat-interval": "1 s"}), db, "t")
    _expect(holder, "held")
    workers, commits = 2, 3
    procs = [_worker("commit", json.dumps(options), warehouse, identifier, str(w), str(commits)) for w in range(workers)]
    for p in procs:
        _expect(p, "ready")
    time.sleep(1.0)
    killed = time.time()
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(10)
    first = min(float(_expect(p, "committed 0", timeout=90).split()[2]) for p in procs)
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    released = first - killed
    print(f"a SIGKILLed holder's lock was released {released:.1f} s after the kill (txn timeout {TXN_TIMEOUT_S} s)")
    assert TXN_TIMEOUT_S - 2 < released < TXN_TIMEOUT_S + 20
    _check_commits(metastore, warehouse, identifier, options, workers, commits)


def test_a_long_section_keeps_its_lock_by_heartbeating(metastore: Metastore):
    db = _db()
    holder = _lock(metastore, **{"lock.heartbeat-interval": "2 s"})
    contender = _lock(metastore, **{"lock-check-max-sleep": "300 ms"})
    released: list[float] = []
    acquired: list[float] = []

    def hold() -> None:
        with holder.hold(db, "t"):
            time.sleep(TXN_TIMEOUT_S + 3)  # past the metastore's timeout: only the heartbeat keeps it
            released.append(time.monotonic())

    thread = threading.Thread(target=hold)
    thread.start()
    time.sleep(0.5)
    contender.run_with_lock(f"hive.{db}.t", lambda: acquired.append(time.monotonic()))
    thread.join(30)
    assert released and acquired and acquired[0] >= released[0]


def test_the_filesystem_catalog_takes_the_hive_lock_with_lock_type_hive(metastore: Metastore, tmp_path: Path):
    options = {"lock.enabled": "true", "lock.type": "hive", "uri": metastore.uri}
    catalog = lakestore.Catalog(str(tmp_path / "wh"), options=options)
    assert type(catalog) is FileSystemCatalog and isinstance(catalog.publisher.lock, HiveCatalogLock)
    db = _db()
    catalog.create_database(db)
    table = catalog.create_table(f"{db}.t", schema=SCHEMA)
    errors: list[BaseException] = []
    write = threading.Thread(
        target=_capture, args=(lambda: table.write_arrow(pa.table({"id": [1], "worker": pa.array([0], pa.int32())})), errors)
    )
    with _lock(metastore).hold(db, "t"):
        write.start()
        time.sleep(0.8)
        assert write.is_alive()  # the commit waits for the metastore's lock on the table
    write.join(15)
    assert not errors and table.latest_snapshot().id == 1
