"""Paimon's Hive catalog (``metastore=hive``): databases and tables registered in a Hive
Metastore, table files where Paimon keeps them.

``lakestore.Catalog(warehouse, options={"metastore": "hive", "uri": "thrift://host:9083"})``
returns a ``HiveCatalog``. It follows Paimon 2.0's ``HiveCatalog`` so that Paimon Java (Spark,
Flink, Hive) on the same metastore sees the same databases and tables:

- a database is an HMS ``Database``: ``locationUri`` = its ``location`` property or
  ``<warehouse>/<db>.db`` (HMS creates the folder), ``comment`` -> description, ``owner`` ->
  owner, other properties -> parameters;
- a table is an HMS ``Table`` with Paimon's input/output formats, SerDe and storage handler,
  ``table_type=PAIMON``, its columns with Hive type names, its location in ``sd.location`` (or
  ``paimon_location`` with ``location-in-properties``) and its options as parameters
  (``sync-all-properties``, default true); ``schema-0`` is written under the table's lock first;
- a table is ``EXTERNAL_TABLE`` (with ``EXTERNAL=TRUE``) when created with a ``path`` option,
  ``table.type=external`` or the table option ``external=true``; dropping an external table
  leaves its files, dropping a managed one deletes them;
- ``metastore.partitioned-table=true``: the partition keys are HMS partition keys and every
  commit adds its new partitions and sets their ``numFiles``, ``totalSize``, ``numRows``,
  ``lastUpdateTime``, ``totalBuckets`` (``lakestore.catalog.hive_sync``);
  ``metastore.tag-to-partition=<field>`` registers a string partition key;
- alter: the new schema file under the table's lock, then ``alter_table_with_environment_context``
  (``CASCADE`` from ``alter-table-cascade``, ``DO_NOT_UPDATE_STATS`` from ``hive.skip-update-stats``);
- rename: ``alter_table`` with the new name; a managed table's folder moves with it.

HMS 4's ``MetastoreDefaultTransformer`` stores a non-ACID ``MANAGED_TABLE`` as ``EXTERNAL_TABLE``
with ``TRANSLATED_TO_EXTERNAL=TRUE`` and ``external.table.purge=TRUE``. lakestore keeps treating
such a table as managed (drop deletes its files, rename moves its folder), which is what its
creator asked for and what the purge flag tells HMS too. Paimon Java 2.0 reads the table type and
would treat it as external; to keep both engines in step, disable the transformer on the
metastore (``metastore.metadata.transformer.class`` set to a single space).

Options: ``uri`` (``thrift://host:port``), ``hive-conf-dir`` (``hive-site.xml``:
``hive.metastore.uris``, ``hive.metastore.warehouse.dir``), ``sync-all-properties``,
``table.type``, ``location-in-properties``, ``alter-table-cascade``, ``hive.skip-update-stats``,
``client-pool-size``, ``lock.enabled`` (default: on for object stores) with
``lock-check-max-sleep`` / ``lock-acquire-timeout`` (``lakestore.io.hive_lock``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from lakestore.catalog.base import (
    DB_SUFFIX,
    Catalog,
    NewTable,
    _check_name,
    data_identifier,
    parse_identifier,
    publish_changes,
    split_branch,
)
from lakestore.catalog.hive_sync import HiveTable, PartitionSync
from lakestore.catalog.hive_table import (
    COMMENT_PROP,
    LOCATION_PROP,
    PARTITIONED_TABLE,
    TAG_TO_PARTITION,
    is_external,
    is_paimon_table,
    metastore_partitioned,
    new_hms_table,
    table_location,
    table_parameters,
    update_hms_table,
)
from lakestore.errors import (
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    OptionError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from lakestore.io.fileio import FileIO, local_path, uri_scheme
from lakestore.io.hive_lock import HiveCatalogLock, hive_lock_requested
from lakestore.io.hive_metastore import METASTORE_WAREHOUSE, MetastoreAddress, MetastoreClient, hive_conf, ttypes
from lakestore.io.lock import parse_bool
from lakestore.meta.branch import branch_root
from lakestore.meta.schema import SchemaManager, TableSchema
from lakestore.meta.schema_change import RemoveOption, SchemaChange
from lakestore.table import Table

LOCK_ENABLED = "lock.enabled"
SYNC_ALL_PROPERTIES = "sync-all-properties"
TABLE_TYPE = "table.type"
LOCATION_IN_PROPERTIES = "location-in-properties"
ALTER_TABLE_CASCADE = "alter-table-cascade"
SKIP_UPDATE_STATS = "hive.skip-update-stats"
DB_LOCATION = "location"
DB_OWNER = "owner"
_OBJECT_STORES = ("s3", "s3a", "s3n", "oss", "gs", "abfs", "abfss")
_HIVE_TABLE_OPTIONS = (PARTITIONED_TABLE, TAG_TO_PARTITION, "external", "EXTERNAL")


def _check_hive_options(schema: TableSchema) -> None:
    """Paimon's checks of the metastore options: a boolean ``metastore.partitioned-table``, and
    ``metastore.tag-to-partition`` only on a table without partition keys."""
    parse_bool(PARTITIONED_TABLE, schema.options.get(PARTITIONED_TABLE, "false"))
    if schema.options.get(TAG_TO_PARTITION) and schema.partition_keys:
        raise OptionError(f"option {TAG_TO_PARTITION!r}: a partitioned table cannot map tags to partitions")


class HiveCatalog(Catalog):
    """Paimon's Hive catalog (see the module docstring); built by
    ``lakestore.Catalog(warehouse, options={"metastore": "hive", "uri": ...})``.

    Args:
        warehouse: where new databases' folders go (``<warehouse>/<db>.db``); empty: the
            ``hive.metastore.warehouse.dir`` of ``hive-conf-dir``'s ``hive-site.xml``.
        file_io: the file system to use (default: the one ``warehouse`` and ``options`` name).
        options: ``uri``, ``hive-conf-dir``, ``sync-all-properties``, ``table.type``,
            ``location-in-properties``, ``alter-table-cascade``, ``client-pool-size``,
            ``lock.enabled``, ...

    Raises:
        InvalidCatalogUriError: no metastore address (``uri`` or ``hive-conf-dir``), or one that is
            not ``thrift://host:port``; an unreadable ``hive-site.xml``.
        MissingDriverError: the Hive client packages are not installed (``lakestore[hive]``).
        CatalogUnreachableError: no metastore answers at ``uri``.
        OptionError: an invalid option value.

    Example::

        catalog = lakestore.Catalog("/data/warehouse", options={"metastore": "hive", "uri": "thrift://hms:9083"})
    """

    def __init__(self, warehouse: str, *, file_io: FileIO | None = None, options: Mapping[str, str] | None = None) -> None:
        opts = {str(k): str(v) for k, v in (options or {}).items()}
        conf = hive_conf(opts)
        warehouse = str(warehouse or conf.get(METASTORE_WAREHOUSE) or "").rstrip("/")
        if not warehouse:
            raise OptionError(
                f"metastore=hive needs a warehouse: pass one, or a hive-conf-dir whose hive-site.xml sets {METASTORE_WAREHOUSE}"
            )
        if LOCK_ENABLED not in opts and uri_scheme(warehouse) in _OBJECT_STORES:
            opts[LOCK_ENABLED] = "true"  # Paimon's lockEnabled(): on for object stores unless set
        self.address = MetastoreAddress.from_conf(conf)
        self.client = MetastoreClient(self.address)
        self.client.call("get_all_databases")  # reachable now, not at the first table operation
        super().__init__(warehouse, file_io=file_io, options=opts)
        self.sync_all_properties = parse_bool(SYNC_ALL_PROPERTIES, conf.get(SYNC_ALL_PROPERTIES, "true"))
        self.location_in_properties = parse_bool(LOCATION_IN_PROPERTIES, conf.get(LOCATION_IN_PROPERTIES, "false"))
        self.alter_cascade = parse_bool(ALTER_TABLE_CASCADE, conf.get(ALTER_TABLE_CASCADE, "true"))
        self.skip_update_stats = parse_bool(SKIP_UPDATE_STATS, conf.get(SKIP_UPDATE_STATS, "false"))
        table_type = conf.get(TABLE_TYPE, "managed").strip().lower()
        if table_type not in ("managed", "external"):
            raise OptionError(f"option {TABLE_TYPE!r}={table_type!r}: use 'managed' or 'external'")
        self.external_by_default = table_type == "external"
        self.lock = self._catalog_lock(opts)

    def _catalog_lock(self, opts: Mapping[str, str]) -> HiveCatalogLock | None:
        """The metastore's table lock for create/alter (``lock.enabled``, unless ``lock.type``
        names another lock: then only publishes hold that one, through the catalog's publisher);
        the publisher's own when it holds the Hive lock (publishes under a held lock re-enter it)."""
        if not hive_lock_requested(opts):
            return None
        existing = self.publisher.lock
        return existing if isinstance(existing, HiveCatalogLock) else HiveCatalogLock.from_options(opts)

    def __repr__(self) -> str:
        return f"HiveCatalog({self.warehouse!r}, {self.address.text()!r})"

    def close(self) -> None:
        """Close this process's metastore connections (reopened on next use)."""
        self.client.close()

    @contextmanager
    def _locked(self, database: str, table: str) -> Iterator[None]:
        if self.lock is None:
            yield
            return
        with self.lock.hold(database, table):
            yield

    def _path(self, location: str) -> str:
        """A location HMS returns (``file:/x`` for a local one) as this catalog's file IO opens it."""
        return local_path(location) if uri_scheme(self.warehouse) in ("", "file") else location

    # -- databases ----------------------------------------------------------------------------
    def _hms_database(self, name: str) -> Any | None:
        try:
            return self.client.call("get_database", _check_name(name, "database"))
        except ttypes().NoSuchObjectException:
            return None

    def _require_database(self, name: str) -> None:
        if self._hms_database(name) is None:
            raise DatabaseNotFoundError(f"database {name!r} does not exist in the Hive Metastore")

    def database_path(self, name: str) -> str:
        """The database's location in the metastore (``<warehouse>/<db>.db`` when not registered).

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        db = self._hms_database(name)
        if db is not None:
            location = (db.parameters or {}).get(LOCATION_PROP) or db.locationUri
            if location:
                return self._path(str(location)).rstrip("/")
        return f"{self.warehouse}/{name}{DB_SUFFIX}"

    def database_exists(self, name: str) -> bool:
        """Whether database ``name`` is registered in the metastore.

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        return self._hms_database(name) is not None

    def create_database(self, name: str, *, exist_ok: bool = False, properties: Mapping[str, str] | None = None) -> None:
        """Register the database (Paimon's ``createDatabaseImpl``): ``location`` (default
        ``<warehouse>/<db>.db``), ``comment``, ``owner`` and the other properties as parameters.

        Raises:
            DatabaseAlreadyExistsError: it is registered and ``exist_ok`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
            HiveMetastoreError: the metastore refused it (e.g. it cannot create the folder).
        """
        t = ttypes()
        if self._hms_database(name) is not None:
            if exist_ok:
                return
            raise DatabaseAlreadyExistsError(f"database {name!r} already exists")
        props = {str(k): str(v) for k, v in (properties or {}).items()}
        location = props.pop(DB_LOCATION, None) or f"{self.warehouse}/{name}{DB_SUFFIX}"
        db = t.Database(name=name, description=props.pop(COMMENT_PROP, None), ownerName=props.pop(DB_OWNER, None), parameters=props)
        if self.location_in_properties:
            self.file_io.mkdirs(location)  # HMS never touches the path: Paimon creates it
            db.parameters = {**props, LOCATION_PROP: location}
        else:
            db.locationUri = location
        try:
            self.client.call("create_database", db)
        except t.AlreadyExistsException as exc:
            if not exist_ok:
                raise DatabaseAlreadyExistsError(f"database {name!r} already exists") from exc

    def database_properties(self, name: str) -> dict[str, str]:
        """The database's properties as Paimon's ``getDatabase`` returns them (parameters plus
        ``comment``, ``owner``, ``location``).

        Raises:
            DatabaseNotFoundError: it is not registered.
        """
        db = self._hms_database(name)
        if db is None:
            raise DatabaseNotFoundError(f"database {name!r} does not exist in the Hive Metastore")
        props = dict(db.parameters or {})
        for key, value in ((COMMENT_PROP, db.description), (DB_OWNER, db.ownerName), (DB_LOCATION, db.locationUri)):
            if value is not None:
                props[key] = value
        return props

    def list_databases(self) -> list[str]:
        """Every database of the metastore (``default`` included), sorted."""
        return sorted(self.client.call("get_all_databases"))

    def drop_database(self, name: str, *, cascade: bool = False, missing_ok: bool = False) -> None:
        """Drop the database; with ``cascade`` its tables first (as ``drop_table``). The metastore
        deletes the database folder (``location-in-properties``: lakestore does).

        Raises:
            DatabaseNotFoundError: it is not registered and ``missing_ok`` is false.
            TableAlreadyExistsError: it holds tables and ``cascade`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        t = ttypes()
        db = self._hms_database(name)
        if db is None:
            if missing_ok:
                return
            raise DatabaseNotFoundError(f"database {name!r} does not exist in the Hive Metastore")
        tables = self.client.call("get_all_tables", name)
        if tables and not cascade:
            raise TableAlreadyExistsError(f"database {name!r} is not empty; pass cascade=True")
        for table in self.list_tables(name):
            self.drop_table(f"{name}.{table}", missing_ok=True)
        location = (db.parameters or {}).get(LOCATION_PROP)
        if location:
            path = self._path(location)
            if self.file_io.exists(path):
                self.file_io.delete_dir(path)
        try:
            self.client.call("drop_database", name, True, True)  # deleteData, cascade (Paimon's dropDatabase)
        except t.NoSuchObjectException:
            if not missing_ok:
                raise DatabaseNotFoundError(f"database {name!r} does not exist in the Hive Metastore") from None

    # -- tables -------------------------------------------------------------------------------
    def _hms_table(self, database: str, table: str) -> Any | None:
        t = ttypes()
        try:
            return self.client.call("get_table_req", t.GetTableRequest(dbName=database, tblName=table)).table
        except t.NoSuchObjectException:
            return None

    def _paimon_table(self, identifier: str) -> tuple[str, str, Any]:
        database, table = parse_identifier(identifier)
        hms_table = self._hms_table(database, table)
        if hms_table is None or not is_paimon_table(hms_table):
            self._require_database(database)
            what = "is not a Paimon table" if hms_table is not None else "does not exist in the Hive Metastore"
            raise TableNotFoundError(f"table {identifier!r} {what}")
        return database, table, hms_table

    def table_path(self, identifier: str) -> str:
        """The table's location: the metastore's, or where a new one would go (its database's
        location + ``/<table>``).

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        database, table = parse_identifier(identifier)
        hms_table = self._hms_table(database, table)
        location = table_location(hms_table) if hms_table is not None else None
        if location:
            return self._path(location).rstrip("/")
        return f"{self.database_path(database)}/{table}"

    def table_exists(self, identifier: str) -> bool:
        """Whether ``"db.t"`` is registered as a Paimon table.

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        database, table = parse_identifier(identifier)
        hms_table = self._hms_table(database, table)
        return hms_table is not None and is_paimon_table(hms_table)

    def list_tables(self, database: str) -> list[str]:
        """The Paimon tables of ``database`` (HMS tables with Paimon's formats), sorted.

        Raises:
            DatabaseNotFoundError: the database is not registered.
        """
        self._require_database(database)
        names = self.client.call("get_all_tables", database)
        return sorted(n for n in names if (h := self._hms_table(database, n)) is not None and is_paimon_table(h))

    def _create_table(self, new: NewTable, *, exist_ok: bool) -> Table:
        """Create a table as Paimon's ``createTableImpl``: ``schema-0`` under the table's lock,
        then the HMS table; if the metastore refuses it, a managed table's folder is deleted.
        The table option ``path`` places it elsewhere (external); a non-Paimon HMS table of that
        name is refused too."""
        t = ttypes()
        identifier, database, table = new.identifier, new.database, new.name
        self._require_database(database)
        existing = self._hms_table(database, table)
        if existing is not None:
            if exist_ok and is_paimon_table(existing):
                return self.get_table(identifier)
            kind = "" if is_paimon_table(existing) else " (not a Paimon table)"
            raise TableAlreadyExistsError(f"table {identifier!r} already exists in the Hive Metastore{kind}")
        table_options = {str(k): str(v) for k, v in new.options.items()}
        custom = table_options.pop("path", None)
        # the metastore's own table options: lakestore's option check refuses them as other engines' settings
        hive_options = {k: table_options.pop(k) for k in list(table_options) if k in _HIVE_TABLE_OPTIONS or k.startswith("hive.")}
        table_schema = new.table_schema(table_options)
        if hive_options:
            table_schema = replace(table_schema, options={**table_schema.options, **hive_options})
        _check_hive_options(table_schema)
        flag = hive_options.get("external", hive_options.get("EXTERNAL", ""))
        external = bool(custom) or self.external_by_default or flag.upper() == "TRUE"
        path = self._path(custom).rstrip("/") if custom else f"{self.database_path(database)}/{table}"
        with self._locked(database, table):
            manager = self._schemas(path)
            if not manager.publish(table_schema):
                current = manager.latest()
                if not external or current is None:
                    raise TableAlreadyExistsError(f"table {identifier!r}: {path} already holds a table the Hive Metastore does not list")
                table_schema = current  # an external table over existing files keeps their schema
            hms_table = new_hms_table(
                database,
                table,
                table_schema,
                path,
                external=external,
                sync_all_properties=self.sync_all_properties,
                location_in_properties=self.location_in_properties,
            )
            try:
                self.client.call("create_table", hms_table)
            except BaseException as exc:
                if not external:
                    self.file_io.delete_dir(path)
                if isinstance(exc, t.AlreadyExistsException):
                    raise TableAlreadyExistsError(f"table {identifier!r} already exists in the Hive Metastore") from exc
                raise
        return self._open(identifier, database, table, path)

    def _open(self, identifier: str, database: str, table: str, path: str, branch: str = "main") -> Table:
        sync = PartitionSync(self.client, database, table)
        return HiveTable(
            path, file_io=self.file_io, identifier=identifier, branch=branch, sync=sync, snapshot_commit=self._snapshot_commit()
        )

    def get_table(self, identifier: str) -> Table:
        """A Paimon table registered in the metastore (by Paimon Java or lakestore), at its HMS
        location; ``"db.t$branch_<name>"`` opens a branch.

        Raises:
            TableNotFoundError: not registered, not a Paimon table, or its folder holds no schema.
            DatabaseNotFoundError: the database is not registered.
            InvalidIdentifierError: a malformed identifier, or one naming a system table.
        """
        base, branch = data_identifier(identifier)
        database, table, hms_table = self._paimon_table(base)
        path = self._path(table_location(hms_table) or f"{self.database_path(database)}/{table}").rstrip("/")
        if not SchemaManager(self.file_io, branch_root(path, branch)).list_ids():
            raise TableNotFoundError(f"table {identifier!r} is registered in the Hive Metastore but {path} holds no schema")
        return self._open(base, database, table, path, branch)

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> Table:
        """Publish the changed schema under the table's lock, then update the HMS table (main
        branch only), as Paimon's ``alterTableImpl``; if the metastore refuses, the new schema
        file is deleted again.

        Raises:
            TableNotFoundError: the table is not registered.
            SchemaChangeError: a change Paimon refuses.
            CommitRetriesExhaustedError: other writers kept publishing schemas first.
            LockAcquireTimeoutError: the table's lock was not acquired in time.
            HiveMetastoreError: the metastore refused the new table definition.
        """
        t = ttypes()
        base, branch = split_branch(identifier)
        database, table, hms_table = self._paimon_table(base)
        path = self._path(table_location(hms_table) or self.table_path(base)).rstrip("/")
        manager = self._schemas(branch_root(path, branch))
        with self._locked(database, table):
            altered = publish_changes(manager, identifier, changes)
        if branch == "main":
            removed = {c.key for c in changes if isinstance(c, RemoveOption)}
            hms_table.parameters = {k: v for k, v in (hms_table.parameters or {}).items() if k not in removed}
            hms_table.parameters.update(table_parameters(altered, sync_all_properties=self.sync_all_properties))
            update_hms_table(hms_table, altered, table_location(hms_table) or path, location_in_properties=self.location_in_properties)
            skip = self.skip_update_stats or str(hms_table.parameters.get("DO_NOT_UPDATE_STATS", "")).lower() == "true"
            env = {"DO_NOT_UPDATE_STATS": "true" if skip else "false"}
            if self.alter_cascade:
                env["CASCADE"] = "true"
            try:
                self.client.call("alter_table_with_environment_context", database, table, hms_table, t.EnvironmentContext(properties=env))
            except BaseException:
                self.file_io.delete(manager.path(altered.id))
                raise
        return self._open(base, database, table, path, branch)

    def drop_table(self, identifier: str, *, missing_ok: bool = False) -> None:
        """Drop the HMS table; a managed table's folder is deleted too (the metastore is asked to
        delete data, ``ifPurge``), an external table's files stay (Paimon's ``dropTableImpl``).

        Raises:
            TableNotFoundError: it is not registered and ``missing_ok`` is false.
            InvalidIdentifierError: a malformed identifier.
        """
        t = ttypes()
        try:
            database, table, hms_table = self._paimon_table(identifier)
        except (TableNotFoundError, DatabaseNotFoundError):
            if missing_ok:
                return
            raise
        external = is_external(hms_table)
        path = self._path(table_location(hms_table) or self.table_path(identifier))
        with self._locked(database, table):
            try:
                env = t.EnvironmentContext(properties={"ifPurge": "TRUE"})
                self.client.call("drop_table_with_environment_context", database, table, not external, env)
            except t.NoSuchObjectException:
                if missing_ok:
                    return
                raise TableNotFoundError(f"table {identifier!r} does not exist in the Hive Metastore") from None
            if not external and self.file_io.exists(path):
                self.file_io.delete_dir(path)

    def rename_table(self, source: str, target: str) -> None:
        """Rename the HMS table (``alter_table`` with the new name); a managed table's folder moves
        to ``<target database location>/<name>`` when the metastore did not move it itself.

        Raises:
            TableNotFoundError: ``source`` is not registered.
            DatabaseNotFoundError: ``target``'s database is not registered.
            TableAlreadyExistsError: ``target`` is registered, or its folder exists.
            InvalidIdentifierError: a malformed identifier.
        """
        t = ttypes()
        database, table, hms_table = self._paimon_table(source)
        dst_db, dst_table = parse_identifier(target)
        self._require_database(dst_db)
        if self._hms_table(dst_db, dst_table) is not None:
            raise TableAlreadyExistsError(f"table {target!r} already exists in the Hive Metastore")
        from_path = self._path(table_location(hms_table) or "").rstrip("/")
        hms_table.dbName, hms_table.tableName = dst_db, dst_table
        try:
            self.client.call("alter_table", database, table, hms_table)
        except t.InvalidOperationException as exc:
            raise TableAlreadyExistsError(f"cannot rename {source!r} to {target!r}: {exc.message}") from exc
        renamed = self._hms_table(dst_db, dst_table)
        if renamed is None or is_external(renamed):
            return
        to_path = f"{self.database_path(dst_db)}/{dst_table}"
        still_there = bool(SchemaManager(self.file_io, from_path).list_ids())
        if from_path and to_path != from_path and still_there:
            if self.file_io.exists(to_path):
                raise TableAlreadyExistsError(f"table {target!r}: {to_path} exists already")
            self.file_io.rename(from_path, to_path)
            moved = SchemaManager(self.file_io, to_path).latest()
            assert moved is not None
            update_hms_table(renamed, moved, to_path, location_in_properties=LOCATION_PROP in (renamed.parameters or {}))
            self.client.call("alter_table", dst_db, dst_table, renamed)

    def partitioned_in_metastore(self, identifier: str) -> bool:
        """Whether HMS holds the table's partitions (``metastore.partitioned-table`` or
        ``metastore.tag-to-partition``).

        Raises:
            TableNotFoundError: the table is not registered.
        """
        table = self.get_table(identifier)
        return metastore_partitioned(table.schema)
