"""The catalog API, declared once: ``Catalog`` is the abstract base of the filesystem, JDBC, REST
and Hive catalogs, and ``Catalog(warehouse, options=...)`` builds the one the ``metastore`` option
names (``lakestore.catalog.factory``).

What every catalog shares lives here too: identifiers (``"database.table"``, Paimon's
``$branch_<name>`` suffix), ``create_table``'s arguments (a ``NewTable`` handed to each
implementation's ``_create_table``), system tables and the retried publish of a changed schema.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from lakestore.catalog.factory import catalog_class
from lakestore.commit.snapshot_commit import RenamingSnapshotCommit
from lakestore.errors import CommitRetriesExhaustedError, DatabaseNotFoundError, InvalidIdentifierError, TableNotFoundError
from lakestore.io.factory import file_io_for, publisher_for
from lakestore.io.fileio import FileIO
from lakestore.io.publish import MetadataPublisher
from lakestore.meta.branch import MAIN_BRANCH, validate_branch_name
from lakestore.meta.names import check_name
from lakestore.meta.schema import SchemaManager, TableSchema, new_schema
from lakestore.meta.schema_change import SchemaChange, apply_changes
from lakestore.system import SystemTable, split_system_table
from lakestore.table import Table

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
DB_SUFFIX = ".db"
BRANCH_SEPARATOR = "$branch_"
SCHEMA_RETRIES = 10  # schema publishes lost to concurrent writers before alter_table gives up
_F = TypeVar("_F")

if TYPE_CHECKING:
    # ``lakestore.Catalog(...)`` is the factory, so type checkers must let callers instantiate the
    # base: to them the catalog API is plain methods. At run time they are abstract (ABCMeta
    # refuses to build an implementation that misses one).
    def abstract(method: _F) -> _F:
        return method
else:
    abstract = abstractmethod


def _check_name(name: str, what: str) -> str:
    """A database or table name: letters, digits, ``_`` and ``-`` (in full), one file name.

    Raises:
        InvalidIdentifierError: it is not.
    """
    return check_name(name, what, pattern=_NAME, suffix=DB_SUFFIX if what == "database" else "")


def parse_identifier(identifier: str) -> tuple[str, str]:
    """``"db.t"`` -> (``"db"``, ``"t"``).

    Raises:
        InvalidIdentifierError: not two valid names joined by a dot.
    """
    parts = identifier.split(".") if isinstance(identifier, str) else []
    if len(parts) != 2:
        raise InvalidIdentifierError(f"table identifier must be 'database.table', got {identifier!r}")
    return _check_name(parts[0], "database"), _check_name(parts[1], "table")


def split_branch(identifier: str) -> tuple[str, str]:
    """``"db.t$branch_dev"`` -> (``"db.t"``, ``"dev"``); a plain identifier is on ``main``.

    Raises:
        BranchError: an invalid branch name.
    """
    if isinstance(identifier, str) and BRANCH_SEPARATOR in identifier:
        base, branch = identifier.split(BRANCH_SEPARATOR, 1)
        return base, validate_branch_name(branch)
    return identifier, MAIN_BRANCH


def data_identifier(identifier: str) -> tuple[str, str]:
    """The table and branch ``get_table`` opens: ``"db.t$branch_dev"`` -> (``"db.t"``, ``"dev"``).

    Raises:
        InvalidIdentifierError: ``identifier`` names a system table (``"db.t$files"``); the
            message says to use ``get_system_table``.
        BranchError: an invalid branch name.
    """
    data, system = split_system_table(identifier)
    if system is not None:
        raise InvalidIdentifierError(
            f"{identifier!r} names the system table {system!r}, which is read-only: open it with"
            f" catalog.get_system_table({identifier!r}) or read it with table.inspect.{system}()"
        )
    return split_branch(data)


@dataclass(frozen=True)
class NewTable:
    """The arguments of ``Catalog.create_table``, parsed once: what an implementation's
    ``_create_table`` builds the table from."""

    identifier: str
    database: str
    name: str
    schema: pa.Schema
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    comment: str | None = None

    def table_schema(self, options: Mapping[str, str] | None = None) -> TableSchema:
        """Schema 0 of the table (``lakestore.meta.schema.new_schema``), with ``options`` in
        place of the given ones when passed.

        Raises:
            SchemaMismatchError: duplicate columns, or keys that are not columns.
            UnsupportedTypeError: a column type Paimon has no type for.
            OptionError: an unknown option, one lakestore does not implement, an invalid value.
        """
        return new_schema(
            self.schema,
            partition_keys=self.partition_keys,
            primary_keys=self.primary_keys,
            options=self.options if options is None else options,
            comment=self.comment,
        )


class Catalog(ABC):
    """Where databases and tables are found; ``Catalog(warehouse, options=...)`` builds the
    implementation the ``metastore`` option names: ``FileSystemCatalog`` (``filesystem``, the
    default: ``<warehouse>/<db>.db/<table>/``), ``JdbcCatalog`` (``jdbc``), ``RestCatalog``
    (``rest``) or ``HiveCatalog`` (``hive``). Each is a ``Catalog`` and has the methods below.

    Args:
        warehouse: the warehouse: a local path or ``s3://bucket/path`` (the REST catalog: the
            catalog name the server knows).
        file_io: the file system to use (default: the one ``warehouse`` and ``options`` name).
        options: catalog options: ``metastore`` (``filesystem``, ``jdbc``, ``rest``, ``hive``), S3
            endpoint and credentials, ``lock.enabled``, the JDBC, REST or Hive catalog's ``uri``, ...

    Raises:
        OptionError: an unknown ``metastore`` or warehouse scheme, or an invalid option of the
            implementation (see each one for the errors of connecting to its metastore).

    Example::

        catalog = lakestore.Catalog("/tmp/warehouse")
        catalog.create_database("db", exist_ok=True)
        table = catalog.create_table("db.t", schema=pa.schema([("id", pa.int64())]), primary_keys=["id"])
    """

    warehouse: str
    options: dict[str, str]
    file_io: FileIO
    # how its tables publish snapshots, schemas and tags: ``file_io`` with the catalog lock
    # (``lock.enabled``), ``lakestore.io.publish``
    publisher: MetadataPublisher

    def __new__(cls, *args: Any, **kwargs: Any) -> Catalog:
        impl = catalog_class(kwargs.get("options")) if cls is Catalog else cls
        return super().__new__(impl)

    def __init__(self, warehouse: str, *, file_io: FileIO | None = None, options: Mapping[str, str] | None = None) -> None:
        # options: catalog options (S3 endpoint/credentials, lock.enabled, ...), see lakestore.io.factory
        self.warehouse = str(warehouse).rstrip("/")
        self.options = dict(options or {})
        self.file_io = file_io or file_io_for(self.warehouse, self.options)
        self.publisher = publisher_for(self.file_io, self.options)
        self.file_io.mkdirs(self.warehouse)

    def _snapshot_commit(self) -> RenamingSnapshotCommit:
        """How this catalog's tables publish their snapshots: with its publisher (under the
        catalog lock with ``lock.enabled``), as Paimon's catalogs build ``RenamingSnapshotCommit``."""
        return RenamingSnapshotCommit(self.publisher)

    def _schemas(self, table_path: str) -> SchemaManager:
        """The schema manager of the table (or branch) whose metadata is at ``table_path``; its
        ``publish`` goes through this catalog's publisher."""
        return SchemaManager(self.file_io, table_path, publisher=self.publisher)

    def close(self) -> None:  # noqa: B027 - a catalog without connections has nothing to close
        """Close this process's connections to the metastore, if any (reopened on next use)."""

    # -- databases ----------------------------------------------------------------------------
    @abstract
    def database_path(self, name: str) -> str:
        """The directory of database ``name`` (``<warehouse>/<name>.db`` unless its metastore
        records another location).

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        raise NotImplementedError

    @abstract
    def database_exists(self, name: str) -> bool:
        """Whether database ``name`` exists.

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        raise NotImplementedError

    @abstract
    def create_database(self, name: str, *, exist_ok: bool = False) -> None:
        """Create database ``name``.

        Args:
            name: letters, digits, ``_`` and ``-``.
            exist_ok: return quietly when it exists already.

        Raises:
            DatabaseAlreadyExistsError: it exists and ``exist_ok`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        raise NotImplementedError

    @abstract
    def list_databases(self) -> list[str]:
        """The names of the databases, sorted.

        Raises:
            OSError: the warehouse could not be listed.
            CatalogError: the metastore (JDBC database, Hive Metastore, REST server) failed.
        """
        raise NotImplementedError

    @abstract
    def drop_database(self, name: str, *, cascade: bool = False, missing_ok: bool = False) -> None:
        """Delete database ``name``.

        Args:
            name: the database.
            cascade: also drop the tables it holds (managed tables' files included).
            missing_ok: return quietly when it does not exist.

        Raises:
            DatabaseNotFoundError: it does not exist and ``missing_ok`` is false.
            TableAlreadyExistsError: it holds tables and ``cascade`` is false.
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        raise NotImplementedError

    def _require_database(self, name: str) -> None:
        if not self.database_exists(name):
            raise DatabaseNotFoundError(f"database {name!r} does not exist")

    # -- tables -------------------------------------------------------------------------------
    @abstract
    def table_path(self, identifier: str) -> str:
        """The directory of table ``"db.t"`` (``<warehouse>/db.db/t`` unless its metastore
        records another location).

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        raise NotImplementedError

    @abstract
    def table_exists(self, identifier: str) -> bool:
        """Whether table ``"db.t"`` exists.

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        raise NotImplementedError

    @abstract
    def list_tables(self, database: str) -> list[str]:
        """The names of the tables in ``database``, sorted (without the database prefix).

        Raises:
            DatabaseNotFoundError: the database does not exist.
            InvalidIdentifierError: ``database`` is not a valid database name.
        """
        raise NotImplementedError

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
            TableAlreadyExistsError: the table exists and ``exist_ok`` is false (JDBC, Hive: or
                its folder already holds a table the metastore does not list).
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
            SchemaMismatchError: duplicate columns, or keys that are not columns.
            UnsupportedTypeError: a column type Paimon has no type for.
            OptionError: an unknown option, one lakestore does not implement, an invalid value
                or combination.
            LockAcquireTimeoutError: JDBC and Hive catalogs with ``lock.enabled``: the table's
                lock was not acquired in time.
            HiveMetastoreError: the Hive Metastore refused the table.

        Example::

            schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
            table = catalog.create_table(
                "db.orders", schema=schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "4"}
            )
        """
        database, name = parse_identifier(identifier)
        new = NewTable(identifier, database, name, schema, tuple(partition_keys), tuple(primary_keys), dict(options or {}), comment)
        return self._create_table(new, exist_ok=exist_ok)

    @abstract
    def _create_table(self, new: NewTable, *, exist_ok: bool) -> Table:
        """Create the table ``new`` describes (``create_table`` parsed its identifier); raises
        as ``create_table``."""
        raise NotImplementedError

    @abstract
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
        raise NotImplementedError

    def get_system_table(self, identifier: str) -> SystemTable:
        """A system table: ``"db.t$snapshots"``, ``"db.t$branch_dev$files"`` (Paimon's names,
        ``lakestore.system.SYSTEM_TABLES``), read-only.

        Raises:
            TableNotFoundError: a missing table or an unknown system table.
            InvalidIdentifierError: a malformed identifier, or one that names no system table.

        Example::

            catalog.get_system_table("db.orders$snapshots").to_arrow()
        """
        data, system = split_system_table(identifier)
        if system is None:
            raise InvalidIdentifierError(f"{identifier!r} names no system table (use 'db.t$<system>')")
        return self.get_table(data).inspect.system_table(system)

    @abstract
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
            LockAcquireTimeoutError: JDBC and Hive catalogs with ``lock.enabled``: the table's
                lock was not acquired in time.
            HiveMetastoreError: the Hive Metastore refused the new table definition.

        Example::

            catalog.alter_table("db.orders", [lakestore.AddColumn("note", pa.string()), lakestore.SetOption("bucket", "8")])
        """
        raise NotImplementedError

    @abstract
    def drop_table(self, identifier: str, *, missing_ok: bool = False) -> None:
        """Delete table ``"db.t"`` with all its files, branches and tags (a Hive catalog's
        external table: only its registration).

        Raises:
            TableNotFoundError: it does not exist and ``missing_ok`` is false.
            InvalidIdentifierError: a malformed identifier.
        """
        raise NotImplementedError

    @abstract
    def rename_table(self, source: str, target: str) -> None:
        """Rename (move) table ``source`` to ``target`` (both ``"database.table"``).

        Raises:
            TableNotFoundError: ``source`` does not exist.
            DatabaseNotFoundError: ``target``'s database does not exist.
            TableAlreadyExistsError: ``target`` exists.
            InvalidIdentifierError: a malformed identifier.
        """
        raise NotImplementedError


def publish_changes(manager: SchemaManager, identifier: str, changes: Sequence[SchemaChange]) -> TableSchema:
    """Publish the latest schema with ``changes`` applied as the next ``schema-N``, again on the
    then latest schema when another writer published N first.

    Raises:
        TableNotFoundError: the table has no schema.
        SchemaChangeError: a change Paimon refuses.
        CommitRetriesExhaustedError: other writers kept publishing schemas first.
    """
    for _ in range(SCHEMA_RETRIES):
        current = manager.latest()
        if current is None:
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        altered = apply_changes(current, list(changes))
        if manager.publish(altered):
            return altered
    raise CommitRetriesExhaustedError(f"alter_table {identifier!r}: schema kept changing concurrently")
