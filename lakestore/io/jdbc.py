"""JDBC URIs and connections: the databases behind Paimon's JDBC catalog and its catalog lock.

Paimon Java opens ``uri`` with ``DriverManager`` and passes the ``jdbc.*`` options (prefix
stripped) as connection properties. lakestore speaks to the same two databases it supports:

- ``jdbc:sqlite:<file>``: stdlib ``sqlite3`` (a file every process can open);
- ``jdbc:postgresql://host[:port]/database``: psycopg 3 (``pip install 'lakestore[postgres]'``),
  with ``jdbc.user`` / ``jdbc.password`` (or ``user``/``password`` in the URI's query).

Connections are autocommit: every statement is its own transaction, as Paimon's are.
Failures are typed (``lakestore.errors``) and say what to change: ``InvalidCatalogUriError``
(a URI neither driver understands), ``MissingDriverError`` (psycopg is not installed) and
``CatalogUnreachableError`` (the database refused or could not be reached).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lakestore.errors import CatalogUnreachableError, InvalidCatalogUriError, MissingDriverError, OptionError

JDBC_PREFIX = "jdbc."  # Paimon's JdbcCatalog.PROPERTY_PREFIX
URI_EXAMPLES = "'jdbc:sqlite:/shared/path/catalog.sqlite' or 'jdbc:postgresql://host:5432/db'"


@dataclass(frozen=True)
class JdbcDialect:
    """What differs between the two databases: the placeholder and the duplicate-key error."""

    name: str
    param: str
    integrity_error: Callable[[], type[BaseException]]
    database_error: Callable[[], type[BaseException]]


def _sqlite_integrity_error() -> type[BaseException]:
    return sqlite3.IntegrityError


def _sqlite_database_error() -> type[BaseException]:
    return sqlite3.Error


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise MissingDriverError(
            "a PostgreSQL 'uri' (JDBC catalog or catalog lock) needs the psycopg driver, which is not installed: "
            "pip install 'lakestore[postgres]' (or pip install 'psycopg[binary]')"
        ) from exc
    return psycopg


def _postgres_integrity_error() -> type[BaseException]:
    return _psycopg().errors.IntegrityError


def _postgres_database_error() -> type[BaseException]:
    return _psycopg().Error


SQLITE = JdbcDialect("sqlite", "?", _sqlite_integrity_error, _sqlite_database_error)
POSTGRES = JdbcDialect("postgresql", "%s", _postgres_integrity_error, _postgres_database_error)


def dialect_for(uri: str) -> JdbcDialect:
    """The dialect of a JDBC URI; ``InvalidCatalogUriError`` for anything else."""
    if not isinstance(uri, str) or not uri.strip():
        raise InvalidCatalogUriError(f"option 'uri' is empty: give the catalog database, e.g. {URI_EXAMPLES}")
    bare = uri[len("jdbc:") :] if uri.startswith("jdbc:") else uri
    if bare.startswith("sqlite:"):
        return SQLITE
    if bare.startswith(("postgresql:", "postgres:")):
        return POSTGRES
    scheme = bare.split(":", 1)[0] if ":" in bare else ""
    if scheme in ("mysql", "mariadb"):
        raise InvalidCatalogUriError(
            f"uri {uri!r}: lakestore speaks to SQLite and PostgreSQL catalog databases, not {scheme}; use {URI_EXAMPLES}"
        )
    raise InvalidCatalogUriError(f"uri {uri!r} is not a JDBC URI lakestore can open: use {URI_EXAMPLES}")


def sqlite_path(uri: str) -> str:
    for prefix in ("jdbc:sqlite:", "sqlite:///", "sqlite:"):
        if uri.startswith(prefix):
            path = uri[len(prefix) :]
            if prefix == "jdbc:sqlite:" and path.startswith("file:"):
                path = path[len("file:") :]
            if not path:
                raise InvalidCatalogUriError(f"uri {uri!r} names no SQLite file: use 'jdbc:sqlite:/path/to/catalog.sqlite'")
            return path.split("?", 1)[0]
    raise InvalidCatalogUriError(f"not a SQLite uri: {uri!r}")


def postgres_conninfo(uri: str) -> str:
    bare = uri[len("jdbc:") :] if uri.startswith("jdbc:") else uri
    if not bare.startswith(("postgresql://", "postgres://")):
        raise InvalidCatalogUriError(f"uri {uri!r}: a PostgreSQL uri is 'jdbc:postgresql://host[:port]/database'")
    return bare


def jdbc_properties(options: Mapping[str, str]) -> dict[str, str]:
    """The ``jdbc.*`` options without their prefix (Paimon's ``extractJdbcConfiguration``)."""
    return {k[len(JDBC_PREFIX) :]: str(v) for k, v in options.items() if k.startswith(JDBC_PREFIX)}


# driver properties PostgreSQL's JDBC driver and libpq (psycopg) both take, under the same names
_POSTGRES_PROPERTIES = ("sslmode", "sslrootcert", "sslcert", "sslkey")


def driver_properties(uri: str, options: Mapping[str, str]) -> dict[str, str]:
    """The ``jdbc.*`` driver properties besides ``jdbc.user``/``jdbc.password`` that lakestore
    passes on (PostgreSQL's SSL settings). Any other is refused by name (``OptionError``): a
    connection made without a property the user asked for (say, encryption) must not happen."""
    props = {k: v for k, v in jdbc_properties(options).items() if k not in ("user", "password")}
    allowed = _POSTGRES_PROPERTIES if dialect_for(uri) is POSTGRES else ()
    refused = sorted(k for k in props if k not in allowed)
    if refused:
        names = ", ".join(f"'{JDBC_PREFIX}{k}'" for k in refused)
        also = f" and {', '.join(JDBC_PREFIX + k for k in allowed)}" if allowed else ""
        raise OptionError(
            f"option {names}: lakestore passes only jdbc.user, jdbc.password{also} to the catalog database; "
            "put other connection parameters in the uri's query where the driver takes them there"
        )
    return props


def connect(
    uri: str,
    *,
    user: str | None = None,
    password: str | None = None,
    properties: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
) -> Any:
    """An autocommit DB-API connection to ``uri``; ``properties`` from ``driver_properties``.

    Raises ``InvalidCatalogUriError``, ``MissingDriverError`` or ``CatalogUnreachableError``.
    """
    dialect = dialect_for(uri)
    if dialect is SQLITE:
        path = sqlite_path(uri)
        try:
            if path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            # autocommit; writers wait on the file lock up to 60 s instead of failing busy
            conn = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # a file that is not a database fails here
        except (OSError, sqlite3.Error) as exc:
            raise CatalogUnreachableError(
                f"cannot open the SQLite catalog database {path!r} ({exc}): check that its folder exists or can be "
                "created, is writable, and that the file is a SQLite database"
            ) from exc
        return conn
    psycopg = _psycopg()
    kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": max(1, int(timeout_s))}
    if user:
        kwargs["user"] = user
    if password:
        kwargs["password"] = password
    kwargs.update(properties or {})
    conninfo = postgres_conninfo(uri)
    try:
        return psycopg.connect(conninfo, **kwargs)
    except psycopg.ProgrammingError as exc:  # libpq could not parse the conninfo
        raise InvalidCatalogUriError(f"uri {uri!r} is not a valid PostgreSQL URI ({exc}): use {URI_EXAMPLES}") from exc
    except psycopg.OperationalError as exc:
        raise CatalogUnreachableError(
            f"cannot connect to the PostgreSQL catalog database {uri!r}: {str(exc).strip()}; check that the server runs "
            "and accepts connections at that host and port, that the database exists, and 'jdbc.user'/'jdbc.password'"
        ) from exc
