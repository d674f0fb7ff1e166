"""The catalog lock: mutual exclusion between processes around check-and-publish.

Object stores have no atomic create-if-absent rename, so two committers could both "create"
``snapshot-N``. Paimon's answer (``JdbcCatalogLock``) is a row per lock in a SQL table: INSERT to
acquire (the primary key makes a second INSERT fail), DELETE to release, and a lock older than its
expiry is deleted by the next contender so a crashed holder cannot block a table forever.

This module follows Paimon's protocol and schema exactly, so lakestore and Paimon (Java or
pypaimon) sharing one lock database exclude each other:

- table ``paimon_distributed_locks(lock_id PK, acquired_at TIMESTAMP, expire_time_seconds)``;
- lock id ``{catalog-key}.{database}.{table}``;
- retry with exponential backoff starting at 100 ms, capped at ``lock-check-max-sleep``, giving
  up after ``lock-acquire-timeout``;
- a row is expired when ``now - acquired_at > expire_time_seconds``. Paimon writes
  ``lock-acquire-timeout`` as the expiry; lakestore does too unless ``lock.expire-time`` (a
  lakestore extension) says otherwise.

Backends: SQLite (stdlib ``sqlite3``, a file every process can open) and PostgreSQL (psycopg 3).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from lakestore.errors import LockAcquireTimeoutError, OptionError
from lakestore.io import jdbc
from lakestore.io.option_values import duration_option, parse_bool

T = TypeVar("T")

LOCK_TABLE = "paimon_distributed_locks"

# Paimon's option names (CatalogOptions / JdbcCatalogOptions) and defaults.
LOCK_ENABLED = "lock.enabled"
LOCK_TYPE = "lock.type"
LOCK_CHECK_MAX_SLEEP = "lock-check-max-sleep"  # default 8 s
LOCK_ACQUIRE_TIMEOUT = "lock-acquire-timeout"  # default 8 min
CATALOG_KEY = "catalog-key"  # default "jdbc"
LOCK_KEY_MAX_LENGTH = "lock-key-max-length"  # default 255
JDBC_URI = "uri"
JDBC_USER = "jdbc.user"
JDBC_PASSWORD = "jdbc.password"
# lakestore extension: how old a lock row must be before another process may take it over.
LOCK_EXPIRE_TIME = "lock.expire-time"


@runtime_checkable
class CatalogLock(Protocol):
    """Cross-process mutual exclusion keyed by a lock id (Paimon's ``CatalogLock``)."""

    def run_with_lock(self, lock_id: str, fn: Callable[[], T]) -> T: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class LockOptions:
    uri: str
    user: str | None = None
    password: str | None = None
    catalog_key: str = "jdbc"
    check_max_sleep_ms: int = 8_000
    acquire_timeout_ms: int = 480_000
    expire_ms: int | None = None  # None: the acquire timeout, as Paimon does
    key_max_length: int = 255
    properties: tuple[tuple[str, str], ...] = ()  # jdbc.* driver properties (lakestore.io.jdbc)

    @property
    def expire_seconds(self) -> int:
        return max(1, (self.expire_ms if self.expire_ms is not None else self.acquire_timeout_ms) // 1000)

    def to_options(self) -> dict[str, str]:
        """The catalog options ``from_options`` builds these from (``lock.enabled`` included),
        the password too (``lakestore.io.secrets`` tells it apart)."""
        options = {
            LOCK_ENABLED: "true",
            LOCK_TYPE: "jdbc",
            JDBC_URI: self.uri,
            CATALOG_KEY: self.catalog_key,
            LOCK_CHECK_MAX_SLEEP: f"{self.check_max_sleep_ms} ms",
            LOCK_ACQUIRE_TIMEOUT: f"{self.acquire_timeout_ms} ms",
            LOCK_KEY_MAX_LENGTH: str(self.key_max_length),
            **{jdbc.JDBC_PREFIX + k: v for k, v in self.properties},
        }
        if self.expire_ms is not None:
            options[LOCK_EXPIRE_TIME] = f"{self.expire_ms} ms"
        if self.user is not None:
            options[JDBC_USER] = self.user
        if self.password is not None:
            options[JDBC_PASSWORD] = self.password
        return options

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> LockOptions:
        lock_type = options.get(LOCK_TYPE, "jdbc")
        if lock_type != "jdbc":
            raise OptionError(f"option {LOCK_TYPE!r}={lock_type!r}: lakestore implements only the 'jdbc' catalog lock")
        uri = options.get(JDBC_URI)
        if not uri:
            raise OptionError(
                f"'{LOCK_ENABLED}=true' needs '{JDBC_URI}': the lock database every writer shares, "
                "e.g. 'jdbc:sqlite:/shared/path/locks.db' or 'jdbc:postgresql://host:5432/db' "
                f"(with '{JDBC_USER}'/'{JDBC_PASSWORD}')"
            )
        expire = options.get(LOCK_EXPIRE_TIME)
        try:
            key_max_length = int(options.get(LOCK_KEY_MAX_LENGTH, "255"))
        except ValueError:
            raise OptionError(f"option {LOCK_KEY_MAX_LENGTH!r}: not an integer") from None
        return cls(
            uri=uri,
            user=options.get(JDBC_USER),
            password=options.get(JDBC_PASSWORD),
            catalog_key=options.get(CATALOG_KEY, "jdbc"),
            check_max_sleep_ms=duration_option(LOCK_CHECK_MAX_SLEEP, options.get(LOCK_CHECK_MAX_SLEEP, "8 s")),
            acquire_timeout_ms=duration_option(LOCK_ACQUIRE_TIMEOUT, options.get(LOCK_ACQUIRE_TIMEOUT, "8 min")),
            expire_ms=duration_option(LOCK_EXPIRE_TIME, expire) if expire is not None else None,
            key_max_length=key_max_length,
            properties=tuple(sorted(jdbc.driver_properties(uri, options).items())),
        )


def lock_enabled(options: Mapping[str, str]) -> bool:
    return parse_bool(LOCK_ENABLED, options.get(LOCK_ENABLED, "false"))


def table_lock_id(catalog_key: str, table_path: str, *, max_length: int = 255) -> str:
    """Paimon's lock id ``{catalog-key}.{database}.{table}`` from a ``.../<db>.db/<table>`` path;
    other paths (tables opened by a path outside a catalog layout) use the path itself."""
    parts = table_path.rstrip("/").rsplit("/", 2)
    if len(parts) == 3 and parts[1].endswith(".db") and len(parts[1]) > 3:
        lock_id = f"{catalog_key}.{parts[1][:-3]}.{parts[2]}"
    else:
        lock_id = f"{catalog_key}.{table_path.rstrip('/')}"
    if len(lock_id) > max_length:
        # still unique per table: keep a readable head and a digest of the whole id
        digest = hashlib.sha256(lock_id.encode()).hexdigest()[:32]
        lock_id = f"{lock_id[: max_length - 33]}#{digest}"
    return lock_id


def run_publish_locked(lock: CatalogLock, catalog_key: str, path: str, fn: Callable[[], T]) -> T:
    """Run ``fn``, the publish of ``path`` (lakestore publishes only
    ``<table>/{snapshot,schema,tag}/<name>``), holding the table's catalog lock, as Paimon's
    ``RenamingSnapshotCommit`` holds it around its absence check and rename: writers of every
    engine that share the lock database then exclude each other."""
    table_path = path.rsplit("/", 2)[0]
    options = getattr(lock, "options", None)
    lock_id = table_lock_id(catalog_key, table_path, max_length=getattr(options, "key_max_length", 255))
    return lock.run_with_lock(lock_id, fn)


class JdbcCatalogLock:
    """Paimon's JDBC catalog lock over SQLite or PostgreSQL.

    Picklable (Spark executors rebuild it): only the options travel, and each process opens its
    own connection (a connection inherited through fork is never reused).
    """

    def __init__(self, options: LockOptions) -> None:
        self.options = options
        self._dialect = _dialect_for(options.uri)
        self._conn: Any = None
        self._pid = -1
        self._guard = threading.Lock()  # one connection per process: serialise its users
        self._held: dict[str, Any] = {}  # lock id -> acquired_at of the row this process inserted
        self._local = threading.local()  # lock ids the current thread holds (reentrancy)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> JdbcCatalogLock:
        return cls(LockOptions.from_options(options))

    def __getstate__(self) -> dict:
        return {"options": self.options}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, state["options"])

    def __repr__(self) -> str:
        return f"JdbcCatalogLock({self._dialect.name}, catalog_key={self.options.catalog_key!r})"

    # -- protocol -----------------------------------------------------------------------------
    def run_with_lock(self, lock_id: str, fn: Callable[[], T]) -> T:
        with self.hold(lock_id):
            return fn()

    @contextmanager
    def hold(self, lock_id: str) -> Iterator[None]:
        """Hold ``lock_id``; reentrant within a thread (a catalog operation that holds a table's
        lock publishes the table's schema, which takes the same lock)."""
        held = self._thread_held()
        if lock_id in held:
            yield
            return
        self.acquire(lock_id)
        held.add(lock_id)
        try:
            yield
        finally:
            held.discard(lock_id)
            self.release(lock_id)

    def _thread_held(self) -> set[str]:
        held: set[str] | None = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = set()
        return held

    def acquire(self, lock_id: str) -> None:
        opts = self.options
        start = time.monotonic()
        sleep_ms = 50
        while True:
            self._release_expired(lock_id)
            if self._try_insert(lock_id):
                return
            elapsed_ms = (time.monotonic() - start) * 1000
            if elapsed_ms > opts.acquire_timeout_ms:
                raise LockAcquireTimeoutError(
                    f"catalog lock {lock_id!r} still held after {int(elapsed_ms)} ms "
                    f"({LOCK_ACQUIRE_TIMEOUT}={opts.acquire_timeout_ms} ms); a crashed holder's lock "
                    f"expires {opts.expire_seconds} s after it was taken"
                )
            sleep_ms = min(sleep_ms * 2, opts.check_max_sleep_ms)
            time.sleep(min(sleep_ms, max(1.0, opts.acquire_timeout_ms - elapsed_ms)) / 1000)

    def release(self, lock_id: str) -> None:
        p = self._dialect.param
        acquired_at = self._held.pop(lock_id, None)
        if acquired_at is None:
            self._execute(f"DELETE FROM {LOCK_TABLE} WHERE lock_id = {p}", (lock_id,))
        else:
            # Only our own row: if it expired and another process took the lock over, deleting
            # by id alone would release that process's lock too.
            self._execute(f"DELETE FROM {LOCK_TABLE} WHERE lock_id = {p} AND acquired_at = {p}", (lock_id, acquired_at))

    def close(self) -> None:
        with self._guard:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # -- SQL ----------------------------------------------------------------------------------
    def _try_insert(self, lock_id: str) -> bool:
        p = self._dialect.param
        try:
            self._execute(
                f"INSERT INTO {LOCK_TABLE} (lock_id, expire_time_seconds) VALUES ({p}, {p})", (lock_id, self.options.expire_seconds)
            )
        except self._dialect.integrity_error():
            return False
        rows = self._execute(f"SELECT acquired_at FROM {LOCK_TABLE} WHERE lock_id = {p}", (lock_id,))
        if rows:
            self._held[lock_id] = rows[0][0]
        return True

    def _release_expired(self, lock_id: str) -> None:
        self._execute(self._dialect.release_expired_sql, (lock_id,))

    def _execute(self, sql: str, params: tuple) -> list[tuple]:
        with self._guard:
            conn = self._connection()
            cur = conn.cursor()
            try:
                cur.execute(sql, params)
                return list(cur.fetchall()) if cur.description is not None else []
            finally:
                cur.close()

    def _connection(self) -> Any:
        if self._conn is None or self._pid != os.getpid():
            self._conn = self._dialect.connect(self.options)
            self._pid = os.getpid()
            self._dialect.create_table(self._conn, self.options.key_max_length)
        return self._conn


# -- dialects ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Dialect:
    name: str
    param: str
    release_expired_sql: str
    connect: Callable[[LockOptions], Any]
    integrity_error: Callable[[], type[BaseException]]

    def create_table(self, conn: Any, key_max_length: int) -> None:
        sql = (
            f"CREATE TABLE IF NOT EXISTS {LOCK_TABLE} ("
            f"lock_id VARCHAR({key_max_length}) NOT NULL, "
            "acquired_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL, "
            "expire_time_seconds BIGINT DEFAULT 0 NOT NULL, "
            "PRIMARY KEY (lock_id))"
        )
        cur = conn.cursor()
        try:
            cur.execute(sql)
        except self.integrity_error():
            # PostgreSQL: two sessions racing CREATE TABLE IF NOT EXISTS; the other one won
            pass
        finally:
            cur.close()


def _sqlite_connect(options: LockOptions) -> Any:
    return jdbc.connect(options.uri)


def _sqlite_integrity_error() -> type[BaseException]:
    return sqlite3.IntegrityError


def _postgres_connect(options: LockOptions) -> Any:
    return jdbc.connect(options.uri, user=options.user, password=options.password, properties=dict(options.properties))


def _postgres_integrity_error() -> type[BaseException]:
    return jdbc.POSTGRES.integrity_error()


_SQLITE = _Dialect(
    name="sqlite",
    param="?",
    # Paimon's SqlLiteDistributedLockDialect; CURRENT_TIMESTAMP is UTC text, 'now' is UTC
    release_expired_sql=(
        f"DELETE FROM {LOCK_TABLE} WHERE strftime('%s','now') - strftime('%s', acquired_at) > expire_time_seconds AND lock_id = ?"
    ),
    connect=_sqlite_connect,
    integrity_error=_sqlite_integrity_error,
)
_POSTGRES = _Dialect(
    name="postgresql",
    param="%s",
    # Paimon's PostgresqlDistributedLockDialect
    release_expired_sql=(
        f"DELETE FROM {LOCK_TABLE} WHERE EXTRACT(EPOCH FROM AGE(NOW(), acquired_at)) > expire_time_seconds AND lock_id = %s"
    ),
    connect=_postgres_connect,
    integrity_error=_postgres_integrity_error,
)


def _dialect_for(uri: str) -> _Dialect:
    return _POSTGRES if jdbc.dialect_for(uri) is jdbc.POSTGRES else _SQLITE
