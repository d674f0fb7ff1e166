"""Paimon's JDBC catalog (``metastore=jdbc``): databases and tables are rows in a SQL database,
table files stay where the filesystem catalog keeps them.

``lakestore.Catalog(warehouse, options={"metastore": "jdbc", "uri": ...})`` returns a
``JdbcCatalog``. It follows Paimon 2.0's ``JdbcCatalog`` so that Paimon Java (Spark, Flink) with
the same ``uri``, ``warehouse`` and ``catalog-key`` sees the same databases and tables:

- table location ``<warehouse>/<database>.db/<table>`` (Paimon's ``getTableLocation``; the
  database's ``location`` property is recorded, as Paimon records it, and not used for tables);
- create database: SQL rows only (``exists=true``, ``location``, the given properties); no folder;
- create table: under the catalog lock (``lock.enabled``), refused when the table or a view of
  that name is registered; ``schema-0`` is written, then the ``paimon_tables`` row;
- a table exists when it is registered: a table folder nobody registered is not listed or opened
  (Paimon's ``repairTable`` registers such folders; ``JdbcCatalog.repair_table`` here too);
- drop table: the row, then the folder; rename: the row, then the folder (under both tables'
  locks); alter: the new schema file under the table's lock;
- ``sync-all-properties``: tables' options mirrored in ``paimon_table_properties``.

Options: ``uri`` (default ``jdbc:sqlite:<warehouse>/jdbc-catalog.sqlite`` for a local warehouse:
give Paimon Java that same ``uri``), ``jdbc.user`` / ``jdbc.password`` (and PostgreSQL's ``jdbc.sslmode``, ``jdbc.sslrootcert``,
``jdbc.sslcert``, ``jdbc.sslkey``; other ``jdbc.*`` driver properties are refused), ``catalog-key``
(default ``jdbc``), ``lock.enabled`` (default: on for object stores, as Paimon's), the lock's
``lock-acquire-timeout`` / ``lock-check-max-sleep`` (``lakestore.io.lock``).

Where lakestore differs: ``drop_database(cascade=True)`` also deletes the folders of the tables it
drops (Paimon 2.0 deletes only the rows, leaving folders its ``repairCatalog`` would register
again); branches open as ``db.t$branch_<name>`` (Paimon's JDBC catalog refuses them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from lakestore.catalog.base import DB_SUFFIX, NewTable, _check_name, parse_identifier, split_branch
from lakestore.catalog.filesystem import FileSystemCatalog
from lakestore.catalog.jdbc_store import JdbcStore
from lakestore.errors import (
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    InvalidCatalogUriError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from lakestore.io.factory import local_path
from lakestore.io.fileio import FileIO, uri_scheme
from lakestore.io.jdbc import driver_properties
from lakestore.io.lock import JdbcCatalogLock, parse_bool, table_lock_id
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.meta.schema_change import SchemaChange
from lakestore.table import Table

URI = "uri"
CATALOG_KEY = "catalog-key"
LOCK_ENABLED = "lock.enabled"
SYNC_ALL_PROPERTIES = "sync-all-properties"
DEFAULT_SQLITE_FILE = "jdbc-catalog.sqlite"
DATABASE_EXISTS_PROPERTY = "exists"  # Paimon writes it so that an empty database has a row
LOCATION_PROPERTY = "location"  # Paimon's DB_LOCATION_PROP
_OBJECT_STORES = ("s3", "s3a", "s3n", "oss", "gs", "abfs", "abfss")


def default_uri(warehouse: str) -> str:
    """The embedded SQLite database lakestore uses when ``uri`` is not given."""
    if uri_scheme(warehouse) not in ("", "file"):
        raise InvalidCatalogUriError(
            f"metastore=jdbc with warehouse {warehouse!r} needs option 'uri' (the catalog database every engine shares), "
            "e.g. 'jdbc:postgresql://host:5432/db' with 'jdbc.user'/'jdbc.password'; "
            "an embedded SQLite catalog exists only for a local warehouse"
        )
    return f"jdbc:sqlite:{local_path(warehouse).rstrip('/')}/{DEFAULT_SQLITE_FILE}"


class JdbcCatalog(FileSystemCatalog):
    """Paimon's JDBC catalog over SQLite or PostgreSQL (see the module docstring); built by
    ``lakestore.Catalog(warehouse, options={"metastore": "jdbc", ...})``.

    Args:
        warehouse: where the tables' files live (``<warehouse>/<db>.db/<table>``).
        file_io: the file system to use (default: the one ``warehouse`` and ``options`` name).
        options: ``uri`` (default: an embedded SQLite file in a local warehouse), ``jdbc.user``,
            ``jdbc.password``, ``catalog-key``, ``lock.enabled``, ``sync-all-properties``, ...

    Raises:
        InvalidCatalogUriError: ``uri`` is missing where needed or is no SQLite/PostgreSQL URI.
        MissingDriverError: a PostgreSQL ``uri`` without psycopg installed.
        CatalogUnreachableError: the catalog database cannot be reached or opened.
        OptionError: a ``jdbc.*`` driver property lakestore does not pass on.

    The catalog database is opened at construction, as Paimon's is.

    Example::

        catalog = lakestore.Catalog("/tmp/warehouse", options={"metastore": "jdbc"})  # embedded SQLite
    """

    def __init__(self, warehouse: str, *, file_io: FileIO | None = None, options: Mapping[str, str] | None = None) -> None:
        opts = {str(k): str(v) for k, v in (options or {}).items()}
        warehouse = str(warehouse).rstrip("/")
        if not opts.get(URI):
            opts[URI] = default_uri(warehouse)
        if LOCK_ENABLED not in opts and uri_scheme(warehouse) in _OBJECT_STORES:
            opts[LOCK_ENABLED] = "true"  # Paimon's lockEnabled(): on for object stores unless set
        super().__init__(warehouse, file_io=file_io, options=opts)
        self.catalog_key = opts.get(CATALOG_KEY, "jdbc")
        self.sync_all_properties = parse_bool(SYNC_ALL_PROPERTIES, opts.get(SYNC_ALL_PROPERTIES, "false"))
        self.store = JdbcStore(
            opts[URI],
            catalog_key=self.catalog_key,
            user=opts.get("jdbc.user"),
            password=opts.get("jdbc.password"),
            properties=driver_properties(opts[URI], opts),
        )
        self.store.connect()
        self.lock = self._catalog_lock(opts)

    def _catalog_lock(self, opts: Mapping[str, str]) -> JdbcCatalogLock | None:
        """With ``lock.enabled``: the lock of this catalog's publisher when it is the JDBC lock
        (publishes under a held lock then re-enter it), else a lock of its own."""
        if not parse_bool(LOCK_ENABLED, opts.get(LOCK_ENABLED, "false")):
            return None
        existing = self.publisher.lock
        if isinstance(existing, JdbcCatalogLock):
            return existing
        return JdbcCatalogLock.from_options({**opts, LOCK_ENABLED: "true"})

    def __repr__(self) -> str:
        return f"JdbcCatalog({self.warehouse!r}, {self.store!r})"

    def close(self) -> None:
        """Close this process's connection to the catalog database (reopened on next use)."""
        self.store.close()

    @contextmanager
    def _locked(self, *identifiers: str) -> Iterator[None]:
        """Hold the catalog lock of each table (in a fixed order, as Paimon's ``runWithLocks``)."""
        if self.lock is None:
            yield
            return
        lock = self.lock
        ids = sorted({table_lock_id(self.catalog_key, self.table_path(i), max_length=lock.options.key_max_length) for i in identifiers})
        with ExitStack() as stack:
            for lock_id in ids:
                stack.enter_context(lock.hold(lock_id))
            yield

    # -- databases ----------------------------------------------------------------------------
    def database_exists(self, name: str) -> bool:
        """Whether database ``name`` is registered.

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        return self.store.database_exists(_check_name(name, "database"))

    def create_database(self, name: str, *, exist_ok: bool = False, properties: Mapping[str, str] | None = None) -> None:
        """Register the database (Paimon's rows: ``exists=true``, ``location`` and ``properties``);
        its folder appears with its first table.

        Raises:
            DatabaseAlreadyExistsError: it is registered and ``exist_ok`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        path = self.database_path(name)
        if self.store.database_exists(name):
            if exist_ok:
                return
            raise DatabaseAlreadyExistsError(f"database {name!r} already exists")
        rows = {DATABASE_EXISTS_PROPERTY: "true", **{str(k): str(v) for k, v in (properties or {}).items()}}
        rows.setdefault(LOCATION_PROPERTY, path)
        try:
            self.store.insert_database_properties(name, rows)
        except Exception as exc:
            if not self.store.is_duplicate(exc):
                raise
            if not exist_ok:
                raise DatabaseAlreadyExistsError(f"database {name!r} already exists") from exc

    def database_properties(self, name: str) -> dict[str, str]:
        """The database's properties as Paimon's ``getDatabase`` returns them (``location``
        included).

        Raises:
            DatabaseNotFoundError: the database is not registered.
        """
        self._require_database(name)
        props = self.store.database_properties(name)
        props.pop(DATABASE_EXISTS_PROPERTY, None)
        props.setdefault(LOCATION_PROPERTY, f"{name}{DB_SUFFIX}")
        return props

    def list_databases(self) -> list[str]:
        """The registered databases of this ``catalog-key``, sorted."""
        return self.store.list_databases()

    def drop_database(self, name: str, *, cascade: bool = False, missing_ok: bool = False) -> None:
        """Unregister the database; with ``cascade`` its tables too, deleting their folders.

        Raises:
            DatabaseNotFoundError: it is not registered and ``missing_ok`` is false.
            TableAlreadyExistsError: it holds tables or views and ``cascade`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        if not self.database_exists(name):
            if missing_ok:
                return
            raise DatabaseNotFoundError(f"database {name!r} does not exist")
        tables = self.store.list_tables(name)
        if (tables or self.store.list_views(name)) and not cascade:
            raise TableAlreadyExistsError(f"database {name!r} is not empty; pass cascade=True")
        for table in tables:
            self.drop_table(f"{name}.{table}", missing_ok=True)
        self.store.delete_database(name)
        path = self.database_path(name)
        if self.file_io.exists(path) and not self.file_io.list_status(path):
            self.file_io.delete_dir(path)  # only when empty: another catalog-key may keep tables there

    # -- tables -------------------------------------------------------------------------------
    def table_exists(self, identifier: str) -> bool:
        """Whether table ``"db.t"`` is registered.

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        database, table = parse_identifier(identifier)
        return self.store.table_exists(database, table)

    def list_tables(self, database: str) -> list[str]:
        """The registered tables of ``database``, sorted.

        Raises:
            DatabaseNotFoundError: the database is not registered.
        """
        self._require_database(database)
        return self.store.list_tables(database)

    def _create_table(self, new: NewTable, *, exist_ok: bool) -> Table:
        """Create a table: ``schema-0`` in its folder, then its ``paimon_tables`` row (under the
        catalog lock with ``lock.enabled``); refused when a view of that name is registered, or
        when the folder already holds a table nobody registered (see ``repair_table``)."""
        identifier, database, table = new.identifier, new.database, new.name
        self._require_database(database)
        table_schema = new.table_schema()
        path = self.table_path(identifier)
        with self._locked(identifier):
            if self.store.view_exists(database, table):
                raise TableAlreadyExistsError(f"{identifier!r} is a view in the JDBC catalog")
            if self.store.table_exists(database, table):
                if exist_ok:
                    return self.get_table(identifier)
                raise TableAlreadyExistsError(f"table {identifier!r} already exists")
            if not self._schemas(path).publish(table_schema):
                raise TableAlreadyExistsError(
                    f"table {identifier!r}: {path} already holds a table the JDBC catalog does not list (written through another "
                    "catalog or catalog-key); register it with repair_table, or move it away"
                )
            try:
                self.store.insert_table(database, table)
            except Exception as exc:
                self.file_io.delete_dir(path)
                if self.store.is_duplicate(exc):
                    raise TableAlreadyExistsError(f"table {identifier!r} already exists") from exc
                raise
            self._sync_properties(database, table, table_schema)
        return Table(path, file_io=self.file_io, identifier=identifier, snapshot_commit=self._snapshot_commit())

    def repair_table(self, identifier: str) -> None:
        """Register a table folder the catalog does not list (Paimon's ``repairTable``), its
        database too when missing.

        Raises:
            TableNotFoundError: the folder holds no table.
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        database, table = parse_identifier(identifier)
        latest = SchemaManager(self.file_io, self.table_path(identifier)).latest()
        if latest is None:
            raise TableNotFoundError(f"no table under {self.table_path(identifier)}")
        self.create_database(database, exist_ok=True)
        if not self.store.table_exists(database, table):
            try:
                self.store.insert_table(database, table)
            except Exception as exc:
                if not self.store.is_duplicate(exc):
                    raise
        self._sync_properties(database, table, latest)

    def get_table(self, identifier: str) -> Table:
        """A registered table, ``"db.t$branch_<name>"`` one of its branches (``$`` suffixes as the
        filesystem catalog takes them).

        Raises:
            TableNotFoundError: the table is not registered, or its folder holds no schema.
            DatabaseNotFoundError: the database is not registered.
            InvalidIdentifierError: a malformed identifier.
        """
        base = identifier.split("$", 1)[0] if isinstance(identifier, str) else identifier
        database, table = parse_identifier(base)
        self._require_database(database)
        if not self.store.table_exists(database, table):
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        try:
            return super().get_table(identifier)
        except TableNotFoundError as exc:
            if base != identifier:
                raise
            raise TableNotFoundError(
                f"table {identifier!r} is registered in the JDBC catalog but {self.table_path(base)} holds no schema"
            ) from exc

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> Table:
        """``Catalog.alter_table`` under the table's catalog lock; with ``sync-all-properties``
        the new options are mirrored in ``paimon_table_properties``.

        Raises:
            TableNotFoundError: the table is not registered.
            SchemaChangeError: a change Paimon refuses.
            CommitRetriesExhaustedError: other writers kept publishing schemas first.
            LockAcquireTimeoutError: the catalog lock was not acquired in time.
        """
        base, _ = split_branch(identifier)
        database, table = parse_identifier(base)
        if not self.store.table_exists(database, table):
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        with self._locked(base):
            altered = super().alter_table(identifier, changes)
            if base == identifier:
                self._sync_properties(database, table, altered.schema)
        return altered

    def drop_table(self, identifier: str, *, missing_ok: bool = False) -> None:
        """Unregister table ``"db.t"``, then delete its folder.

        Raises:
            TableNotFoundError: it is not registered and ``missing_ok`` is false.
            InvalidIdentifierError: a malformed identifier.
        """
        database, table = parse_identifier(identifier)
        with self._locked(identifier):  # a create of the same name waits: its folder is not deleted
            if self.store.delete_table(database, table) == 0:
                if missing_ok:
                    return
                raise TableNotFoundError(f"table {identifier!r} does not exist")
            path = self.table_path(identifier)
            if self.file_io.exists(path):
                self.file_io.delete_dir(path)

    def rename_table(self, source: str, target: str) -> None:
        """Rename the table's row, then move its folder (under both tables' catalog locks).

        Raises:
            TableNotFoundError: ``source`` is not registered.
            DatabaseNotFoundError: ``target``'s database is not registered.
            TableAlreadyExistsError: ``target`` is registered (as a table or view), or its folder
                exists, or the folder could not be moved (the row is renamed back).
            InvalidIdentifierError: a malformed identifier.
            LockAcquireTimeoutError: a catalog lock was not acquired in time.
        """
        src, dst = parse_identifier(source), parse_identifier(target)
        with self._locked(source, target):
            if not self.store.table_exists(*src):
                raise TableNotFoundError(f"table {source!r} does not exist")
            self._require_database(dst[0])
            if self.store.table_exists(*dst) or self.store.view_exists(*dst):
                raise TableAlreadyExistsError(f"table {target!r} already exists")
            from_path, to_path = self.table_path(source), self.table_path(target)
            move = bool(SchemaManager(self.file_io, from_path).list_ids())
            if move and self.file_io.exists(to_path):
                raise TableAlreadyExistsError(f"table {target!r}: {to_path} exists already (a table of another catalog?)")
            try:
                self.store.rename_table(src, dst)
            except Exception as exc:
                if self.store.is_duplicate(exc):
                    raise TableAlreadyExistsError(f"table {target!r} already exists") from exc
                raise
            if move:
                self.file_io.mkdirs(self.database_path(dst[0]))  # a JDBC database may have no folder yet
            if move and not self.file_io.rename(from_path, to_path):
                self.store.rename_table(dst, src)
                raise TableAlreadyExistsError(f"table {target!r}: could not move {from_path} to {to_path}")

    def _sync_properties(self, database: str, table: str, schema: TableSchema) -> None:
        """``sync-all-properties``: the table's options plus ``primary-key``, ``partition`` and
        ``bucket-key`` in ``paimon_table_properties``, as Paimon's ``collectTableProperties``."""
        if not self.sync_all_properties:
            return
        props: dict[str, Any] = dict(schema.options)
        for key, values in (("primary-key", schema.primary_keys), ("partition", schema.partition_keys), ("bucket-key", schema.bucket_keys)):
            if values:
                props[key] = ",".join(values)
        self.store.replace_table_properties(database, table, {k: str(v) for k, v in props.items()})
