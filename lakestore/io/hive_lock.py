"""Paimon's HiveCatalogLock: the Hive Metastore's exclusive table lock around a table's
check-and-publish (snapshots, schemas, table creation).

It follows Paimon 2.0's ``HiveCatalogLock`` so lakestore and Paimon Java writers sharing one
metastore exclude each other:

- ``lock(LockRequest([LockComponent(EXCLUSIVE, TABLE, db, table)], user, host))`` with no
  transaction (``txnid`` 0) and the operation type left unset; the lock is per table, a branch
  locks ``<table>$branch_<name>`` (Paimon's ``Identifier.getObjectName()``);
- while the state is ``WAITING``: sleep 100 ms, 200 ms, ... doubling, capped by
  ``lock-check-max-sleep`` (default 8 s), then ``check_lock``; given up after
  ``lock-acquire-timeout`` (default 8 min) with ``unlock`` and ``LockAcquireTimeoutError``
  carrying Paimon's message (``Acquire lock failed for table db.t (lockId=..) after ..ms. Final
  lock state: WAITING``);
- the locked section always ends with ``unlock`` in ``finally`` (an unlock error is logged, not
  raised: the metastore's reaper frees the lock after ``metastore.txn.timeout``).

Where lakestore adds to Paimon: while a section holds the lock longer than
``lock.heartbeat-interval`` (default 60 s; the metastore drops a lock not heartbeated for
``metastore.txn.timeout``, 300 s by default) a thread sends ``heartbeat(lockid)``, so a long
section keeps its lock; a holder that dies stops heartbeating and is reaped.
"""

from __future__ import annotations

import getpass
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from lakestore.errors import LockAcquireTimeoutError
from lakestore.io.hive_metastore import MetastoreAddress, MetastoreClient, hive_conf, ttypes
from lakestore.io.lock import LOCK_ACQUIRE_TIMEOUT, LOCK_CHECK_MAX_SLEEP, LOCK_ENABLED, LOCK_TYPE, duration_option, parse_bool

T = TypeVar("T")
log = logging.getLogger(__name__)

HIVE_LOCK_TYPE = "hive"
LOCK_HEARTBEAT_INTERVAL = "lock.heartbeat-interval"  # lakestore's
# the key run_publish_locked puts in front of "<db>.<table>": tells a catalog table's lock id
HIVE_LOCK_KEY = "hive"
_BRANCH_PATH = re.compile(r"/([^/]+)\.db/([^/]+)(?:/branch/branch-([^/]+))?/?$")


def hive_lock_requested(options: Mapping[str, str]) -> bool:
    """Whether ``options`` ask for the Hive catalog lock: ``lock.enabled`` and ``lock.type=hive``,
    or no ``lock.type`` in a ``metastore=hive`` catalog (Paimon's HiveCatalog default)."""
    if not parse_bool(LOCK_ENABLED, options.get(LOCK_ENABLED, "false")):
        return False
    lock_type = str(options.get(LOCK_TYPE) or "").strip().lower()
    if lock_type:
        return lock_type == HIVE_LOCK_TYPE
    return str(options.get("metastore") or "").strip().lower() == "hive"


def lock_target(lock_id: str) -> tuple[str, str]:
    """(database, table) the metastore locks for a lakestore lock id: ``hive.<db>.<table>``, or
    ``hive.<path>`` of a table (``.../<db>.db/<table>``, ``.../branch/branch-<b>`` for a branch)."""
    key, _, rest = lock_id.partition(".")
    parts = rest.split(".")
    if "/" not in rest and len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    match = _BRANCH_PATH.search(rest)
    if match:
        db, table, branch = match.groups()
        return db, f"{table}$branch_{branch}" if branch else table
    return key or HIVE_LOCK_KEY, re.sub(r"[^A-Za-z0-9_]", "_", rest)[-128:]


@dataclass(frozen=True, slots=True)
class HiveLockOptions:
    address: MetastoreAddress
    check_max_sleep_ms: int = 8_000
    acquire_timeout_ms: int = 480_000
    heartbeat_interval_ms: int = 60_000

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> HiveLockOptions:
        """Raises ``InvalidCatalogUriError`` without a metastore address, ``OptionError`` for a bad duration."""
        conf = hive_conf(options)
        return cls(
            address=MetastoreAddress.from_conf(conf),
            check_max_sleep_ms=duration_option(LOCK_CHECK_MAX_SLEEP, conf.get(LOCK_CHECK_MAX_SLEEP, "8 s")),
            acquire_timeout_ms=duration_option(LOCK_ACQUIRE_TIMEOUT, conf.get(LOCK_ACQUIRE_TIMEOUT, "8 min")),
            heartbeat_interval_ms=duration_option(LOCK_HEARTBEAT_INTERVAL, conf.get(LOCK_HEARTBEAT_INTERVAL, "60 s")),
        )


class HiveCatalogLock:
    """Paimon's HiveCatalogLock (see the module docstring). Picklable: only the options travel.

    Satisfies ``lakestore.io.lock.CatalogLock``: ``run_with_lock(lock_id, fn)`` where ``lock_id``
    names the table (``lock_target``).
    """

    def __init__(self, options: HiveLockOptions, client: MetastoreClient | None = None) -> None:
        self.options = options
        self.client = client or MetastoreClient(options.address)
        self._local = threading.local()

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> HiveCatalogLock:
        return cls(HiveLockOptions.from_options(options))

    def __getstate__(self) -> dict:
        return {"options": self.options}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, state["options"])

    def __repr__(self) -> str:
        return f"HiveCatalogLock({self.options.address.text()!r})"

    def run_with_lock(self, lock_id: str, fn: Callable[[], T]) -> T:
        with self.hold(*lock_target(lock_id)):
            return fn()

    @contextmanager
    def hold(self, database: str, table: str) -> Iterator[None]:
        """Hold the metastore's exclusive lock on ``database.table``; reentrant within a thread
        (a catalog operation holding a table's lock publishes its schema under the same lock).

        Raises:
            LockAcquireTimeoutError: still held by another after ``lock-acquire-timeout``.
            CatalogUnreachableError: the metastore cannot be reached.
        """
        held: set[tuple[str, str]] = self._local.__dict__.setdefault("held", set())
        key = (database.lower(), table.lower())
        if key in held:
            yield
            return
        lock_id = self.acquire(database, table)
        held.add(key)
        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(lock_id, stop), name=f"hms-heartbeat-{lock_id}", daemon=True)
        beat.start()
        try:
            yield
        finally:
            stop.set()
            held.discard(key)
            self.release(lock_id)
            beat.join(timeout=5)

    def acquire(self, database: str, table: str) -> int:
        """Take the lock (Paimon's ``lock``): its lock id, once ``ACQUIRED``."""
        t = ttypes()
        component = t.LockComponent(type=t.LockType.EXCLUSIVE, level=t.LockLevel.TABLE, dbname=database, tablename=table)
        request = t.LockRequest(component=[component], txnid=0, user=_user(), hostname=socket.gethostname())
        start = time.monotonic()
        response = self.client.call("lock", request)
        lock_id = int(response.lockid)
        next_sleep_ms = 50
        try:
            while response.state == t.LockState.WAITING:
                if (time.monotonic() - start) * 1000 >= self.options.acquire_timeout_ms:
                    break
                next_sleep_ms = min(next_sleep_ms * 2, self.options.check_max_sleep_ms)
                time.sleep(next_sleep_ms / 1000)
                response = self.client.call("check_lock", t.CheckLockRequest(lockid=lock_id))
        finally:
            if response.state != t.LockState.ACQUIRED:
                self.release(lock_id)
        if response.state == t.LockState.ACQUIRED:
            return lock_id
        state = t.LockState._VALUES_TO_NAMES.get(response.state, str(response.state))
        elapsed = int((time.monotonic() - start) * 1000)
        raise LockAcquireTimeoutError(
            f"Acquire lock failed for table {database}.{table} (lockId={lock_id}) after {elapsed}ms. Final lock state: {state}"
            f" ({LOCK_ACQUIRE_TIMEOUT}={self.options.acquire_timeout_ms} ms; a dead holder's lock is freed by the metastore"
            " after metastore.txn.timeout)"
        )

    def release(self, lock_id: int) -> None:
        """``unlock`` (Paimon's: ids <= 0 skipped, errors logged and ignored)."""
        if lock_id <= 0:
            return
        try:
            self.client.call("unlock", ttypes().UnlockRequest(lockid=lock_id))
        except Exception:
            log.warning(
                "unlock of Hive Metastore lock %s failed; the metastore frees it after metastore.txn.timeout", lock_id, exc_info=True
            )

    def _heartbeat(self, lock_id: int, stop: threading.Event) -> None:
        interval = self.options.heartbeat_interval_ms / 1000
        while not stop.wait(interval):
            try:
                self.client.call("heartbeat", ttypes().HeartbeatRequest(lockid=lock_id, txnid=0))
            except Exception:
                log.warning("heartbeat of Hive Metastore lock %s failed", lock_id, exc_info=True)

    def close(self) -> None:
        self.client.close()


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "lakestore"
