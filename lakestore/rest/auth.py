"""Who may do what on the REST catalog server: principals, bearer tokens and grants.

Stored in SQLite (stdlib ``sqlite3``, the default: a file beside the warehouse) or PostgreSQL
(``postgresql://...``, through ``psycopg``). Tokens are random (256 bits) and stored only as
their SHA-256 digest, so the database never holds a usable token; the server and the admin
commands never log one. A grant gives a principal a level (``read`` < ``write`` < ``admin``) on
the whole catalog (``*``), a database (``db``) or a table (``db.table``); the highest level of
the grants that cover a resource is the principal's level there.

The store is created only on purpose (``AuthStore(location, create=True)``, as ``lakestore
serve-admin init`` does): opening a missing, unreadable or foreign database raises ``AuthError``
instead of silently starting an empty one (whose new admin would lock every principal out).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lakestore.errors import AuthError
from lakestore.meta.names import check_name

LEVELS = {"read": 1, "write": 2, "admin": 3}
ANY = "*"
TOKEN_PREFIX = "lks"

_TABLES = ("lakestore_principals", "lakestore_tokens", "lakestore_grants")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS lakestore_principals (name TEXT PRIMARY KEY, created_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lakestore_tokens (id TEXT PRIMARY KEY, principal TEXT NOT NULL, digest TEXT NOT NULL UNIQUE,"
    " created_ms BIGINT NOT NULL, revoked_ms BIGINT)",
    "CREATE TABLE IF NOT EXISTS lakestore_grants (principal TEXT NOT NULL, db TEXT NOT NULL, tbl TEXT NOT NULL,"
    " level TEXT NOT NULL, PRIMARY KEY (principal, db, tbl))",
)


@dataclass(frozen=True)
class Grant:
    principal: str
    database: str  # "*" = every database
    table: str  # "*" = every table of the database
    level: str

    @property
    def scope(self) -> str:
        if self.database == ANY:
            return ANY
        return self.database if self.table == ANY else f"{self.database}.{self.table}"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller and its grants."""

    name: str
    grants: tuple[Grant, ...]

    def level(self, database: str | None = None, table: str | None = None) -> int:
        """The principal's level (0 = none) on the catalog (no database), a database (no
        table) or a table: the highest grant covering it."""
        best = 0
        for g in self.grants:
            if g.database == ANY:
                covers = True
            elif database is None or g.database != database:
                covers = False
            else:
                covers = g.table == ANY or (table is not None and g.table == table)
            if covers:
                best = max(best, LEVELS[g.level])
        return best

    def sees_database(self, database: str) -> bool:
        """Any grant inside the database (lists it, and lists the tables granted in it)."""
        return any(g.database in (ANY, database) for g in self.grants)

    def may_reach(self, level: int, database: str | None = None, table: str | None = None) -> bool:
        """Whether some grant of at least ``level`` lies on or inside the resource (the catalog
        without ``database``): necessary for any operation needing ``level`` there, so a caller
        without it is refused before its request body is read."""
        return any(
            LEVELS[g.level] >= level and (database is None or g.database in (ANY, database)) and (table is None or g.table in (ANY, table))
            for g in self.grants
        )


def parse_scope(scope: str) -> tuple[str, str]:
    """``*`` -> (*, *), ``db`` -> (db, *), ``db.table`` -> (db, table). Raises ``AuthError``."""
    if scope == ANY:
        return ANY, ANY
    parts = scope.split(".")
    for part in parts:
        if part:
            check_name(part, "grant scope", error=AuthError)
    if len(parts) == 1 and parts[0]:
        return parts[0], ANY
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise AuthError(f"grant scope must be '*', 'database' or 'database.table', got {scope!r}")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class AuthStore:
    """``AuthStore("auth.sqlite")`` or ``AuthStore("postgresql://user@host/db")``: an existing
    store; ``create=True`` makes a new one (a SQLite file created exclusively, owner-only; the
    tables in PostgreSQL). Thread-safe.

    Raises:
        AuthError: the store is missing (without ``create``), exists already (SQLite, with
            ``create``), cannot be read, or lacks lakestore's tables; or bad arguments later.
    """

    def __init__(self, location: str, *, create: bool = False) -> None:
        self.location = location
        self._lock = threading.Lock()
        self._postgres = location.startswith(("postgresql://", "postgres://"))
        try:
            self._conn: Any = self._connect(create)
            if create:
                for statement in _SCHEMA:
                    self._execute(statement)
            missing = [t for t in _TABLES if not self._has_table(t)]
        except (sqlite3.Error, OSError) as exc:
            raise AuthError(f"cannot open the auth database {self._shown}: {exc}") from exc
        except Exception as exc:  # psycopg's errors: unreachable, refused
            if type(exc).__module__.split(".")[0] != "psycopg":
                raise
            raise AuthError(f"cannot open the auth database {self._shown}: {type(exc).__name__}") from exc
        if missing:
            self.close()
            raise AuthError(
                f"{self._shown} is not a lakestore auth database (no table {missing[0]}); create one with 'lakestore serve-admin init'"
            )

    @property
    def _shown(self) -> str:
        """The location without a password."""
        if not self._postgres:
            return self.location
        parts = urllib.parse.urlsplit(self.location)
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        netloc = f"{parts.username}@{netloc}" if parts.username else netloc
        return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=""))

    def _connect(self, create: bool) -> Any:
        if self._postgres:
            import psycopg

            return psycopg.connect(self.location, autocommit=True)
        if create:  # exclusively, never through a symlink; digests only, but nobody else needs to read who may do what
            try:
                os.close(os.open(self.location, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            except FileExistsError as exc:
                raise AuthError(f"an auth database exists already at {self.location}") from exc
        elif os.path.lexists(self.location) and not os.path.isfile(self.location):
            raise AuthError(f"cannot open the auth database {self.location}: it is not a regular file")
        elif not os.path.isfile(self.location):
            raise AuthError(
                f"no auth database at {self.location}: create one with 'lakestore serve-admin init' "
                "(or start once with 'lakestore serve --init')"
            )
        uri = "file:" + urllib.parse.quote(os.path.abspath(self.location)) + "?mode=rw"  # never creates a file
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    def _has_table(self, name: str) -> bool:
        if self._postgres:
            return self._execute("SELECT to_regclass(CAST(? AS text))", (name,))[0][0] is not None
        return bool(self._execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- plumbing ----------------------------------------------------------------------------
    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self._postgres else statement

    def _execute(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            cursor = self._conn.execute(self._sql(statement), tuple(params))
            rows = cursor.fetchall() if cursor.description else []
            return [tuple(r) for r in rows]

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock:
            if self._postgres:
                with self._conn.transaction():
                    yield
            else:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")

    # -- principals and tokens ---------------------------------------------------------------
    def add_principal(self, name: str) -> None:
        if not name or not name.replace("_", "").replace("-", "").isalnum():
            raise AuthError(f"principal name must be letters, digits, '_' or '-', got {name!r}")
        if self._execute("SELECT name FROM lakestore_principals WHERE name = ?", (name,)):
            return
        self._execute("INSERT INTO lakestore_principals (name, created_ms) VALUES (?, ?)", (name, _now()))

    def principals(self) -> list[str]:
        return [r[0] for r in self._execute("SELECT name FROM lakestore_principals ORDER BY name")]

    def _require_principal(self, name: str) -> None:
        if not self._execute("SELECT name FROM lakestore_principals WHERE name = ?", (name,)):
            raise AuthError(f"no principal {name!r} (add it first)")

    def issue_token(self, principal: str) -> tuple[str, str]:
        """A new token for ``principal``: (token id, token). The token is shown only here."""
        self._require_principal(principal)
        token_id = secrets.token_hex(6)
        token = f"{TOKEN_PREFIX}_{token_id}_{secrets.token_urlsafe(32)}"
        self._execute(
            "INSERT INTO lakestore_tokens (id, principal, digest, created_ms) VALUES (?, ?, ?, ?)",
            (token_id, principal, digest(token), _now()),
        )
        return token_id, token

    def remove_principal(self, name: str) -> bool:
        """Remove a principal: its grants, and every token of it revoked (kept, by id, as
        revoked). False when there is no such principal."""
        with self._transaction():
            found = self._conn.execute(self._sql("SELECT name FROM lakestore_principals WHERE name = ?"), (name,)).fetchall()
            self._conn.execute(
                self._sql("UPDATE lakestore_tokens SET revoked_ms = ? WHERE principal = ? AND revoked_ms IS NULL"), (_now(), name)
            )
            self._conn.execute(self._sql("DELETE FROM lakestore_grants WHERE principal = ?"), (name,))
            self._conn.execute(self._sql("DELETE FROM lakestore_principals WHERE name = ?"), (name,))
        return bool(found)

    def revoke_token(self, token_id: str) -> bool:
        """Revoke by token id; False when no live token has that id."""
        live = self._execute("SELECT id FROM lakestore_tokens WHERE id = ? AND revoked_ms IS NULL", (token_id,))
        if not live:
            return False
        self._execute("UPDATE lakestore_tokens SET revoked_ms = ? WHERE id = ?", (_now(), token_id))
        return True

    def tokens(self) -> list[dict[str, Any]]:
        rows = self._execute("SELECT id, principal, created_ms, revoked_ms FROM lakestore_tokens ORDER BY created_ms, id")
        return [{"id": r[0], "principal": r[1], "created_ms": r[2], "revoked_ms": r[3]} for r in rows]

    def authenticate(self, token: str) -> Principal | None:
        """The principal of a live token, or None (also when the principal no longer exists)."""
        if not token:
            return None
        wanted = digest(token)
        rows = self._execute(
            "SELECT t.principal, t.digest FROM lakestore_tokens t JOIN lakestore_principals p ON p.name = t.principal"
            " WHERE t.digest = ? AND t.revoked_ms IS NULL",
            (wanted,),
        )
        if not rows or not hmac.compare_digest(rows[0][1], wanted):
            return None
        return self.principal(rows[0][0])

    def principal(self, name: str) -> Principal:
        rows = self._execute("SELECT principal, db, tbl, level FROM lakestore_grants WHERE principal = ?", (name,))
        return Principal(name, tuple(Grant(*r) for r in sorted(rows)))

    # -- grants ------------------------------------------------------------------------------
    def grant(self, principal: str, level: str, scope: str) -> None:
        """Give ``principal`` ``level`` on ``scope`` (replacing its grant on that scope)."""
        if level not in LEVELS:
            raise AuthError(f"level must be one of {sorted(LEVELS)}, got {level!r}")
        database, table = parse_scope(scope)
        self._require_principal(principal)
        with self._transaction():
            self._conn.execute(
                self._sql("DELETE FROM lakestore_grants WHERE principal = ? AND db = ? AND tbl = ?"), (principal, database, table)
            )
            self._conn.execute(
                self._sql("INSERT INTO lakestore_grants (principal, db, tbl, level) VALUES (?, ?, ?, ?)"),
                (principal, database, table, level),
            )

    def revoke(self, principal: str, scope: str) -> bool:
        database, table = parse_scope(scope)
        found = self._execute("SELECT level FROM lakestore_grants WHERE principal = ? AND db = ? AND tbl = ?", (principal, database, table))
        self._execute("DELETE FROM lakestore_grants WHERE principal = ? AND db = ? AND tbl = ?", (principal, database, table))
        return bool(found)

    def grants(self) -> list[Grant]:
        return [Grant(*r) for r in self._execute("SELECT principal, db, tbl, level FROM lakestore_grants ORDER BY principal, db, tbl")]

    def bootstrap_admin(self, name: str = "admin") -> str | None:
        """On an empty store: add ``name`` with ``admin`` on ``*`` and return a token for it
        (shown once); None when the store already has principals."""
        if self.principals():
            return None
        self.add_principal(name)
        self.grant(name, "admin", ANY)
        return self.issue_token(name)[1]


def _now() -> int:
    return int(time.time() * 1000)
