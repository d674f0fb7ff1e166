"""The SQL side of Paimon's JDBC catalog: its tables, names and statements (Paimon 2.0's
``JdbcUtils``), so Paimon Java's ``JdbcCatalog`` and lakestore's share one database.

- ``paimon_tables(catalog_key, database_name, table_name)``: one row per table;
- ``paimon_database_properties(catalog_key, database_name, property_key, property_value)``:
  a database exists when it has a property (``exists=true`` is always written) or a table;
- ``paimon_table_properties``: the tables' options, kept only with ``sync-all-properties``;
- ``paimon_views``: views Paimon Java creates; lakestore lists their databases and refuses
  tables of the same name, and creates no views itself.

Every row carries the ``catalog-key`` (default ``jdbc``): catalogs with different keys share a
database without seeing each other's databases or tables. Each process opens its own autocommit
connection (``lakestore.io.jdbc``), as the catalog lock does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from lakestore.errors import CatalogUnreachableError
from lakestore.io import jdbc

CATALOG_TABLE = "paimon_tables"
DATABASE_PROPERTIES_TABLE = "paimon_database_properties"
TABLE_PROPERTIES_TABLE = "paimon_table_properties"
VIEW_TABLE = "paimon_views"

# Paimon 2.0's CREATE TABLE statements (JdbcUtils), made idempotent: Paimon checks the database's
# metadata for the table and creates it when missing, which is the same table.
_DDL = (
    f"CREATE TABLE IF NOT EXISTS {CATALOG_TABLE}(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT NULL,"
    "table_name VARCHAR(255) NOT NULL, PRIMARY KEY (catalog_key, database_name, table_name))",
    f"CREATE TABLE IF NOT EXISTS {DATABASE_PROPERTIES_TABLE}(catalog_key VARCHAR(255) NOT NULL,"
    "database_name VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
    "PRIMARY KEY (catalog_key, database_name, property_key))",
    f"CREATE TABLE IF NOT EXISTS {TABLE_PROPERTIES_TABLE}(catalog_key VARCHAR(255) NOT NULL,"
    "database_name VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,property_key VARCHAR(255) NOT NULL,"
    "property_value VARCHAR(1000),PRIMARY KEY (catalog_key, database_name, table_name, property_key))",
    f"CREATE TABLE IF NOT EXISTS {VIEW_TABLE}(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT NULL,"
    "view_name VARCHAR(255) NOT NULL,view_schema TEXT NOT NULL, PRIMARY KEY (catalog_key, database_name, view_name))",
)


class JdbcStore:
    """The catalog's rows in one SQL database, for one ``catalog-key``.

    Picklable: only the connection settings travel; each process connects on first use.
    Raises ``InvalidCatalogUriError``, ``MissingDriverError`` or ``CatalogUnreachableError``
    (``lakestore.io.jdbc``); a duplicate key raises the driver's integrity error, which
    ``is_duplicate`` recognises.
    """

    def __init__(
        self,
        uri: str,
        *,
        catalog_key: str = "jdbc",
        user: str | None = None,
        password: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        self.uri = uri
        self.catalog_key = catalog_key
        self.user = user
        self.password = password
        self.properties = dict(properties or {})
        self.dialect = jdbc.dialect_for(uri)
        self._conn: Any = None
        self._pid = -1
        self._guard = threading.Lock()

    def __getstate__(self) -> dict:
        keys = ("catalog_key", "user", "password", "properties")
        return {"uri": self.uri, **{k: getattr(self, k) for k in keys}}

    def __setstate__(self, state: dict) -> None:
        uri = state.pop("uri")
        type(self).__init__(self, uri, **state)

    def __repr__(self) -> str:
        return f"JdbcStore({self.dialect.name}, catalog_key={self.catalog_key!r})"

    # -- connection ---------------------------------------------------------------------------
    def connect(self) -> None:
        """Open the connection and create Paimon's catalog tables where missing."""
        with self._guard:
            self._connection()

    def close(self) -> None:
        with self._guard:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def _connection(self) -> Any:
        if self._conn is None or self._pid != os.getpid():
            conn = jdbc.connect(self.uri, user=self.user, password=self.password, properties=self.properties)
            for ddl in _DDL:
                cur = conn.cursor()
                try:
                    cur.execute(ddl)
                except self.dialect.integrity_error():
                    pass  # PostgreSQL: another session created it at the same moment
                except self.dialect.database_error() as exc:
                    conn.close()
                    raise CatalogUnreachableError(
                        f"cannot create Paimon's catalog tables in {self.uri!r} ({exc}): the user needs CREATE rights there"
                    ) from exc
                finally:
                    cur.close()
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def is_duplicate(self, exc: BaseException) -> bool:
        return isinstance(exc, self.dialect.integrity_error())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[tuple], int]:
        """Run one statement with ``?`` placeholders; (rows, affected row count)."""
        if self.dialect.param != "?":
            sql = sql.replace("?", self.dialect.param)
        with self._guard:
            for attempt in (1, 2):
                conn = self._connection()
                try:
                    cur = conn.cursor()
                    try:
                        cur.execute(sql, tuple(params))
                        rows = list(cur.fetchall()) if cur.description is not None else []
                        return rows, cur.rowcount
                    finally:
                        cur.close()
                except self.dialect.integrity_error():
                    raise
                except self.dialect.database_error() as exc:
                    if attempt == 2 or not _connection_lost(conn):
                        raise CatalogUnreachableError(f"the catalog database {self.uri!r} failed: {exc}") from exc
                    self._conn = None  # a dropped connection: reconnect once, as Paimon's pool does
        raise AssertionError("unreachable")

    def _exists(self, sql: str, params: Sequence[Any]) -> bool:
        return bool(self.execute(sql, params)[0])

    # -- databases ----------------------------------------------------------------------------
    def database_exists(self, database: str) -> bool:
        key = self.catalog_key
        return (
            self._exists(f"SELECT database_name FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ? LIMIT 1", (key, database))
            or self._exists(
                f"SELECT database_name FROM {DATABASE_PROPERTIES_TABLE} WHERE catalog_key = ? AND database_name = ? ", (key, database)
            )
            or self._exists(f"SELECT database_name FROM {VIEW_TABLE} WHERE catalog_key = ? AND database_name = ? LIMIT 1", (key, database))
        )

    def list_databases(self) -> list[str]:
        names: set[str] = set()
        for table in (CATALOG_TABLE, DATABASE_PROPERTIES_TABLE, VIEW_TABLE):
            rows, _ = self.execute(f"SELECT DISTINCT database_name FROM {table} WHERE catalog_key = ?", (self.catalog_key,))
            names.update(r[0] for r in rows)
        return sorted(names)

    def database_properties(self, database: str) -> dict[str, str]:
        rows, _ = self.execute(
            f"SELECT property_key, property_value FROM {DATABASE_PROPERTIES_TABLE} WHERE catalog_key = ? AND database_name = ? ",
            (self.catalog_key, database),
        )
        return {k: v for k, v in rows}

    def insert_database_properties(self, database: str, properties: Mapping[str, str]) -> None:
        """One INSERT of every property: all land or none (a duplicate key raises)."""
        values = ", ".join("(?,?,?,?)" for _ in properties)
        params = [x for k, v in properties.items() for x in (self.catalog_key, database, k, v)]
        self.execute(
            f"INSERT INTO {DATABASE_PROPERTIES_TABLE} (catalog_key, database_name, property_key, property_value) VALUES {values}", params
        )

    def delete_database(self, database: str) -> None:
        """Paimon's dropDatabaseImpl: the database's tables, properties, table properties, views."""
        for table in (CATALOG_TABLE, DATABASE_PROPERTIES_TABLE, TABLE_PROPERTIES_TABLE, VIEW_TABLE):
            self.execute(f"DELETE FROM {table} WHERE catalog_key = ? AND database_name = ?", (self.catalog_key, database))

    # -- tables -------------------------------------------------------------------------------
    def table_exists(self, database: str, table: str) -> bool:
        return self._exists(
            f"SELECT * FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ? AND table_name = ? ",
            (self.catalog_key, database, table),
        )

    def view_exists(self, database: str, name: str) -> bool:
        return self._exists(
            f"SELECT * FROM {VIEW_TABLE} WHERE catalog_key = ? AND database_name = ? AND view_name = ? ", (self.catalog_key, database, name)
        )

    def list_tables(self, database: str) -> list[str]:
        sql = f"SELECT table_name FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ?"
        rows, _ = self.execute(sql, (self.catalog_key, database))
        return sorted(r[0] for r in rows)

    def list_views(self, database: str) -> list[str]:
        sql = f"SELECT view_name FROM {VIEW_TABLE} WHERE catalog_key = ? AND database_name = ?"
        rows, _ = self.execute(sql, (self.catalog_key, database))
        return sorted(r[0] for r in rows)

    def insert_table(self, database: str, table: str) -> None:
        self.execute(
            f"INSERT INTO {CATALOG_TABLE} (catalog_key, database_name, table_name)  VALUES (?,?,?)", (self.catalog_key, database, table)
        )

    def delete_table(self, database: str, table: str) -> int:
        _, count = self.execute(
            f"DELETE FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ? AND table_name = ? ",
            (self.catalog_key, database, table),
        )
        self.delete_table_properties(database, table)
        return count

    def rename_table(self, source: tuple[str, str], target: tuple[str, str]) -> int:
        """Paimon's RENAME_TABLE_SQL and RENAME_TABLE_PROPERTIES_SQL; the rows renamed."""
        params = (*target, self.catalog_key, *source)
        where = "WHERE catalog_key = ? AND database_name = ? AND table_name = ? "
        _, count = self.execute(f"UPDATE {CATALOG_TABLE} SET database_name = ? , table_name = ?  {where}", params)
        self.execute(f"UPDATE {TABLE_PROPERTIES_TABLE} SET database_name = ? , table_name = ?  {where}", params)
        return count

    # -- table properties (sync-all-properties) ----------------------------------------------
    def table_properties(self, database: str, table: str) -> dict[str, str]:
        where = "WHERE catalog_key = ? AND database_name = ? AND table_name = ? "
        sql = f"SELECT property_key, property_value FROM {TABLE_PROPERTIES_TABLE} {where}"
        rows, _ = self.execute(sql, (self.catalog_key, database, table))
        return {k: v for k, v in rows}

    def delete_table_properties(self, database: str, table: str) -> None:
        self.execute(
            f"DELETE FROM {TABLE_PROPERTIES_TABLE} WHERE catalog_key = ? AND database_name = ? AND table_name = ?",
            (self.catalog_key, database, table),
        )

    def replace_table_properties(self, database: str, table: str, properties: Mapping[str, str]) -> None:
        self.delete_table_properties(database, table)
        if not properties:
            return
        values = ", ".join("(?,?,?,?,?)" for _ in properties)
        params = [x for k, v in properties.items() for x in (self.catalog_key, database, table, k, v)]
        self.execute(
            f"INSERT INTO {TABLE_PROPERTIES_TABLE} (catalog_key, database_name, table_name, property_key, property_value) VALUES {values}",
            params,
        )


def _connection_lost(conn: Any) -> bool:
    closed = getattr(conn, "closed", False)  # psycopg; sqlite3 connections have no such flag
    return bool(closed)
