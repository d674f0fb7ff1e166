"""The JDBC catalog lock on SQLite and PostgreSQL: Paimon's table and protocol, mutual exclusion
between processes, expiry takeover, and a typed timeout."""

from __future__ import annotations

import pickle
import sqlite3
import subprocess
import sys
import time

import pytest

from lakestore.errors import OptionError
from lakestore.io.lock import JdbcCatalogLock, LockAcquireTimeoutError, LockOptions, table_lock_id

HOLD_SCRIPT = """
import sys, time
from lakestore.io.lock import JdbcCatalogLock, LockOptions
lock = JdbcCatalogLock(LockOptions(uri=sys.argv[1], user=sys.argv[2] or None, expire_ms=int(sys.argv[3])))
lock.acquire("jdbc.db.t")
print("held", flush=True)
time.sleep(600)
"""


@pytest.fixture(params=["sqlite", "postgres"])
def lock_uri(request, tmp_path):
    if request.param == "sqlite":
        return f"jdbc:sqlite:{tmp_path}/locks.db", None
    pg = request.getfixturevalue("postgres")
    return pg.uri, "lake"


def make(lock_uri, **kw) -> JdbcCatalogLock:
    uri, user = lock_uri
    return JdbcCatalogLock(LockOptions(uri=uri, user=user, check_max_sleep_ms=50, **kw))


def test_insert_acquires_delete_releases(lock_uri):
    a, b = make(lock_uri, acquire_timeout_ms=300), make(lock_uri, acquire_timeout_ms=300)
    a.acquire("jdbc.db.t")
    with pytest.raises(LockAcquireTimeoutError, match="jdbc.db.t"):
        b.acquire("jdbc.db.t")
    b.run_with_lock("jdbc.db.other", lambda: None)  # other tables are independent
    a.release("jdbc.db.t")
    assert b.run_with_lock("jdbc.db.t", lambda: 42) == 42
    a.close(), b.close()


def test_paimon_lock_table_layout(tmp_path):
    lock = JdbcCatalogLock(LockOptions(uri=f"jdbc:sqlite:{tmp_path}/l.db", acquire_timeout_ms=90_000))
    lock.acquire("jdbc.db.t")
    with sqlite3.connect(f"{tmp_path}/l.db") as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(paimon_distributed_locks)")]
        rows = conn.execute("SELECT lock_id, expire_time_seconds FROM paimon_distributed_locks").fetchall()
    assert cols == ["lock_id", "acquired_at", "expire_time_seconds"]
    assert rows == [("jdbc.db.t", 90)]  # Paimon writes lock-acquire-timeout as the expiry
    lock.release("jdbc.db.t")


def test_expired_lock_of_a_killed_process_is_taken_over(lock_uri):
    uri, user = lock_uri
    holder = subprocess.Popen([sys.executable, "-c", HOLD_SCRIPT, uri, user or "", "1000"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        holder.kill()
        holder.wait()
        waiter = make(lock_uri, acquire_timeout_ms=20_000, expire_ms=1000)
        start = time.monotonic()
        waiter.acquire("jdbc.db.t")
        waited = time.monotonic() - start
        # the dead holder's row blocked the waiter until it expired (1 s, second granularity)
        assert 0.2 < waited < 10
        # the dead holder's late release (same id) must not free the new owner's lock
        other = make(lock_uri, acquire_timeout_ms=200, expire_ms=60_000)
        with pytest.raises(LockAcquireTimeoutError):
            other.acquire("jdbc.db.t")
        waiter.release("jdbc.db.t")
        other.run_with_lock("jdbc.db.t", lambda: None)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_release_after_takeover_keeps_the_new_owners_lock(tmp_path):
    uri = f"jdbc:sqlite:{tmp_path}/l.db"
    slow = JdbcCatalogLock(LockOptions(uri=uri, expire_ms=1000, check_max_sleep_ms=50))
    slow.acquire("jdbc.db.t")
    taker = JdbcCatalogLock(LockOptions(uri=uri, expire_ms=60_000, acquire_timeout_ms=10_000, check_max_sleep_ms=50))
    taker.acquire("jdbc.db.t")  # after slow's row expired
    slow.release("jdbc.db.t")  # too late: must not delete taker's row
    probe = JdbcCatalogLock(LockOptions(uri=uri, acquire_timeout_ms=200, check_max_sleep_ms=50))
    with pytest.raises(LockAcquireTimeoutError):
        probe.acquire("jdbc.db.t")
    taker.release("jdbc.db.t")
    probe.run_with_lock("jdbc.db.t", lambda: None)


def test_options_follow_paimon_names(tmp_path):
    opts = LockOptions.from_options(
        {
            "lock.enabled": "true",
            "uri": f"jdbc:sqlite:{tmp_path}/x.db",
            "lock-check-max-sleep": "2 s",
            "lock-acquire-timeout": "3 min",
            "catalog-key": "prod",
            "jdbc.user": "u",
            "jdbc.password": "p",
        }
    )
    assert (opts.check_max_sleep_ms, opts.acquire_timeout_ms, opts.expire_seconds, opts.catalog_key, opts.user) == (
        2000,
        180_000,
        180,
        "prod",
        "u",
    )
    assert LockOptions.from_options({"uri": "jdbc:sqlite:/x", "lock.expire-time": "30 s"}).expire_seconds == 30
    with pytest.raises(OptionError, match="uri"):
        LockOptions.from_options({"lock.enabled": "true"})
    with pytest.raises(OptionError, match="jdbc"):
        LockOptions.from_options({"uri": "jdbc:sqlite:/x", "lock.type": "zookeeper"})
    with pytest.raises(OptionError, match="duration"):
        LockOptions.from_options({"uri": "jdbc:sqlite:/x", "lock-acquire-timeout": "soon"})
    with pytest.raises(OptionError):
        JdbcCatalogLock(LockOptions(uri="jdbc:mysql://h/db"))


def test_lock_ids_are_paimons_and_bounded():
    assert table_lock_id("jdbc", "s3://b/wh/sales.db/orders") == "jdbc.sales.orders"
    long_id = table_lock_id("jdbc", "s3://b/" + "x" * 400, max_length=255)
    assert len(long_id) == 255 and long_id != table_lock_id("jdbc", "s3://b/" + "x" * 399 + "y", max_length=255)


def test_pickled_lock_reconnects(tmp_path):
    lock = JdbcCatalogLock(LockOptions(uri=f"jdbc:sqlite:{tmp_path}/l.db", acquire_timeout_ms=200, check_max_sleep_ms=50))
    lock.acquire("jdbc.db.t")
    clone = pickle.loads(pickle.dumps(lock))
    with pytest.raises(LockAcquireTimeoutError):
        clone.acquire("jdbc.db.t")
    lock.release("jdbc.db.t")
    clone.run_with_lock("jdbc.db.t", lambda: None)
