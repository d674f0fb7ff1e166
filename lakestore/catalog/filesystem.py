"""The filesystem catalog: ``<warehouse>/<db>.db/<table>/``, as Paimon lays it out."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from lakestore.catalog.factory import catalog_class
from lakestore.errors import (
    CommitRetriesExhaustedError,
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    InvalidIdentifierError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from lakestore.io.factory import file_io_for
from lakestore.io.fileio import FileIO
from lakestore.meta.branch import MAIN_BRANCH, branch_root, validate_branch_name
from lakestore.meta.names import check_name
from lakestore.meta.schema import SchemaManager, new_schema
from lakestore.meta.schema_change import SchemaChange, apply_changes
from lakestore.system import SystemTable, split_system_table
from lakestore.table import Table

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
DB_SUFFIX = ".db"


def _check_name(name: str, what: str) -> str:
    """A database or table name: letters, digits, ``_`` and ``-`` (in full), one file name.

    Raises:
        InvalidIdentifierError: it is not.
    """
    return check_name(name, what, pattern=_NAME, suffix=DB_SUFFIX if what == "database" else "")


def parse_identifier(identifier: str) -> tuple[str, str]:
    parts = identifier.split(".") if isinstance(identifier, str) else []
    if len(parts) != 2:
        raise InvalidIdentifierError(f"table identifier must be 'database.table', got {identifier!r}")
    return _check_name(parts[0], "database"), _check_name(parts[1], "table")


BRANCH_SEPARATOR = "$branch_"


def split_branch(identifier: str) -> tuple[str, str]:
    """``"db.t$branch_dev"`` -> (``"db.t"``, ``"dev"``); a plain identifier is on ``main``."""
    if isinstance(identifier, str) and BRANCH_SEPARATOR in identifier:
        base, branch = identifier.split(BRANCH_SEPARATOR, 1)
        return base, validate_branch_name(branch)
    return identifier, MAIN_BRANCH


class Catalog:
    """``Catalog("/path/to/warehouse")``: databases are ``<name>.db`` folders holding tables.

    ``Catalog(warehouse, options={"metastore": "jdbc", ...})`` builds the catalog the
    ``metastore`` option names instead (``lakestore.catalog.factory``), a subclass of this one.

    Args:
        warehouse: the warehouse directory: a local path or ``s3://bucket/path``.
        file_io: the file system to use (default: the one ``warehouse`` and ``options`` name).
        options: catalog options: ``metastore`` (``filesystem``, ``jdbc``, ``rest``), S3
            endpoint and credentials, ``lock.enabled``, the JDBC catalog's ``uri``, ...

    Raises:
        OptionError: an unknown ``metastore`` or warehouse scheme.

    Example::

        catalog = lakestore.Catalog("/tmp/warehouse")
        catalog.create_database("db", exist_ok=True)
        table = catalog.create_table("db.t", schema=pa.schema([("id", pa.int64())]), primary_keys=["id"])
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Catalog:
        impl = catalog_class(kwargs.get("options")) if cls is Catalog else cls
        return super().__new__(impl)

    def __init__(self, warehouse: str, *, file_io: FileIO | None = None, options: Mapping[str, str] | None = None) -> None:
        # options: catalog options (S3 endpoint/credentials, lock.enabled, ...), see lakestore.io.factory
        self.warehouse = str(warehouse).rstrip("/")
        self.options = dict(options or {})
        self.file_io = file_io or file_io_for(self.warehouse, self.options)
        self.file_io.mkdirs(self.warehouse)

    # -- databases ----------------------------------------------------------------------------
    def database_path(self, name: str) -> str:
        """The directory of database ``name`` (``<warehouse>/<name>.db``).

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        return f"{self.warehouse}/{_check_name(name, 'database')}{DB_SUFFIX}"

    def database_exists(self, name: str) -> bool:
        """Whether database ``name`` exists.

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        return self.file_io.exists(self.database_path(name))

    def create_database(self, name: str, *, exist_ok: bool = False) -> None:
        """Create database ``name``.

        Args:
            name: letters, digits, ``_`` and ``-``.
            exist_ok: return quietly when it exists already.

        Raises:
            DatabaseAlreadyExistsError: it exists and ``exist_ok`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        path = self.database_path(name)
        if self.file_io.exists(path):
            if exist_ok:
                return
            raise DatabaseAlreadyExistsError(f"database {name!r} already exists")
        self.file_io.mkdirs(path)

    def list_databases(self) -> list[str]:
        """The names of the databases, sorted."""
        return sorted(
            s.path.rsplit("/", 1)[-1][: -len(DB_SUFFIX)]
            for s in self.file_io.list_status(self.warehouse)
            if s.is_dir and s.path.endswith(DB_SUFFIX)
        )

    def drop_database(self, name: str, *, cascade: bool = False, missing_ok: bool = False) -> None:
        """Delete database ``name`` and its folder.

        Args:
            name: the database.
            cascade: also delete the tables it holds (their files included).
            missing_ok: return quietly when it does not exist.

        Raises:
            DatabaseNotFoundError: it does not exist and ``missing_ok`` is false.
            TableAlreadyExistsError: it holds tables and ``cascade`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        path = self.database_path(name)
        if not self.file_io.exists(path):
            if missing_ok:
                return
            raise DatabaseNotFoundError(f"database {name!r} does not exist")
        if self.list_tables(name) and not cascade:
            raise TableAlreadyExistsError(f"database {name!r} is not empty; pass cascade=True")
        self.file_io.delete_dir(path)

    def _require_database(self, name: str) -> None:
        if not self.database_exists(name):
            raise DatabaseNotFoundError(f"database {name!r} does not exist")

    # -- tables -------------------------------------------------------------------------------
    def table_path(self, identifier: str) -> str:
        """The directory of table ``"db.t"`` (``<warehouse>/db.db/t``), whether it exists or not.

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        database, table = parse_identifier(identifier)
        return f"{self.database_path(database)}/{table}"

    def table_exists(self, identifier: str) -> bool:
        """Whether table ``"db.t"`` exists (its folder holds a schema).

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        return bool(SchemaManager(self.file_io, self.table_path(identifier)).list_ids())

    def list_tables(self, database: str) -> list[str]:
        """The names of the tables in ``database``, sorted (without the database prefix).

        Raises:
            DatabaseNotFoundError: the database does not exist.
            InvalidIdentifierError: ``database`` is not a valid database name.
        """
        self._require_database(database)
        path = self.database_path(database)
        return sorted(
            s.path.rsplit("/", 1)[-1] for s in self.file_io.list_status(path) if s.is_dir and SchemaManager(self.file_io, s.path).list_ids()
        )

    def create_table(
        self,
        identifier: str,
        *,
        schema: pa.Schema,
        partition_keys: Sequence[str] = (),
        primary_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
        comment: str | None = None,
        exist_ok: bool = False,
    ) -> Table:
        """Create a table (its ``schema-0``), as Paimon's ``createTable``.

        Args:
            identifier: ``"database.table"``.
            schema: the columns; a field's ``nullable=False`` becomes Paimon's ``NOT NULL``.
            partition_keys: partition columns.
            primary_keys: primary-key columns (they must include the partition keys); none: an
                append table.
            options: Paimon table options (``bucket``, ``merge-engine``, ``changelog-producer``,
                ...); Paimon options lakestore does not implement are refused by name.
            comment: the table comment.
            exist_ok: return the existing table instead of raising.

        Returns:
            The new table (or, with ``exist_ok``, the existing one, whatever its schema).

        Raises:
            DatabaseNotFoundError: the database does not exist.
            TableAlreadyExistsError: the table exists and ``exist_ok`` is false.
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
            SchemaMismatchError: duplicate columns, or keys that are not columns.
            UnsupportedTypeError: a column type Paimon has no type for.
            OptionError: an unknown option, one lakestore does not implement, an invalid value
                or combination.

        Example::

            schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
            table = catalog.create_table(
                "db.orders", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "4"}
            )
        """
        database, _ = parse_identifier(identifier)
        self._require_database(database)
        table_schema = new_schema(schema, partition_keys=partition_keys, primary_keys=primary_keys, options=options, comment=comment)
        path = self.table_path(identifier)
        manager = SchemaManager(self.file_io, path)
        if not manager.publish(table_schema):
            if exist_ok:
                return self.get_table(identifier)
            raise TableAlreadyExistsError(f"table {identifier!r} already exists")
        return Table(path, file_io=self.file_io, identifier=identifier)

    def get_table(self, identifier: str) -> Table:
        """Open a table: ``"db.t"``, or ``"db.t$branch_<name>"`` for one of its branches (Paimon's
        notation). A system table (``"db.t$files"``) is not a ``Table``: open it with
        ``get_system_table`` or read it with ``table.inspect.files()``.

        Args:
            identifier: ``"database.table"``, with an optional ``$branch_<name>`` suffix.

        Returns:
            The table at its latest schema.

        Raises:
            TableNotFoundError: the table (or branch) does not exist.
            DatabaseNotFoundError: the database does not exist.
            InvalidIdentifierError: a malformed identifier or branch name, or one naming a system
                table (the message says to use ``get_system_table``).

        Example::

            table = catalog.get_table("db.orders")
            dev = catalog.get_table("db.orders$branch_dev")
        """
        data_identifier, system = split_system_table(identifier)
        if system is not None:
            raise InvalidIdentifierError(
                f"{identifier!r} names the system table {system!r}, which is read-only: open it with"
                f" catalog.get_system_table({identifier!r}) or read it with table.inspect.{system}()"
            )
        base, branch = split_branch(data_identifier)
        database, _ = parse_identifier(base)
        self._require_database(database)
        path = self.table_path(base)
        if not SchemaManager(self.file_io, branch_root(path, branch)).list_ids():
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        return Table(path, file_io=self.file_io, identifier=base, branch=branch)

    def get_system_table(self, identifier: str) -> SystemTable:
        """A system table: ``"db.t$snapshots"``, ``"db.t$branch_dev$files"`` (Paimon's names,
        ``lakestore.system.SYSTEM_TABLES``), read-only.

        Raises:
            TableNotFoundError: a missing table or an unknown system table.
            InvalidIdentifierError: a malformed identifier, or one that names no system table.

        Example::

            catalog.get_system_table("db.orders$snapshots").to_arrow()
        """
        data_identifier, system = split_system_table(identifier)
        if system is None:
            raise InvalidIdentifierError(f"{identifier!r} names no system table (use 'db.t$<system>')")
        return self.get_table(data_identifier).inspect.system_table(system)

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> Table:
        """Apply schema changes (``lakestore.meta.schema_change``) as a new ``schema-N``; retried
        when another writer published N first. A branch (``"db.t$branch_<name>"``) evolves its
        own schema.

        Args:
            identifier: ``"database.table"`` (or a branch of it).
            changes: ``AddColumn``, ``DropColumn``, ``RenameColumn``, ``UpdateColumnType``,
                ``UpdateComment``, ``SetOption``, ``RemoveOption``; applied in order, as one schema.

        Returns:
            The table at the new schema.

        Raises:
            TableNotFoundError: the table does not exist.
            SchemaChangeError: a change Paimon refuses (an unknown or key column, an unsafe
                type change, an option that cannot change, ...).
            CommitRetriesExhaustedError: other writers kept publishing schemas first.
            InvalidIdentifierError: a malformed identifier.

        Example::

            catalog.alter_table("db.orders", [lakestore.AddColumn("note", pa.string()), lakestore.SetOption("bucket", "8")])
        """
        base, branch = split_branch(identifier)
        path = self.table_path(base)
        manager = SchemaManager(self.file_io, branch_root(path, branch))
        for _ in range(10):
            current = manager.latest()
            if current is None:
                raise TableNotFoundError(f"table {identifier!r} does not exist")
            if manager.publish(apply_changes(current, list(changes))):
                return Table(path, file_io=self.file_io, identifier=base, branch=branch)
        raise CommitRetriesExhaustedError(f"alter_table {identifier!r}: schema kept changing concurrently")

    def drop_table(self, identifier: str, *, missing_ok: bool = False) -> None:
        """Delete table ``"db.t"`` with all its files, branches and tags.

        Raises:
            TableNotFoundError: it does not exist and ``missing_ok`` is false.
            InvalidIdentifierError: a malformed identifier.
        """
        if not self.table_exists(identifier):
            if missing_ok:
                return
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        self.file_io.delete_dir(self.table_path(identifier))

    def rename_table(self, source: str, target: str) -> None:
        """Rename (move) table ``source`` to ``target`` (both ``"database.table"``).

        Raises:
            TableNotFoundError: ``source`` does not exist.
            DatabaseNotFoundError: ``target``'s database does not exist.
            TableAlreadyExistsError: ``target`` exists.
            InvalidIdentifierError: a malformed identifier.
        """
        if not self.table_exists(source):
            raise TableNotFoundError(f"table {source!r} does not exist")
        target_db, _ = parse_identifier(target)
        self._require_database(target_db)
        if self.file_io.exists(self.table_path(target)):
            raise TableAlreadyExistsError(f"table {target!r} already exists")
        if not self.file_io.rename(self.table_path(source), self.table_path(target)):
            raise TableAlreadyExistsError(f"table {target!r} already exists")
