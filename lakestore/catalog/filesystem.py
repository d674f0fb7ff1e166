"""The filesystem catalog: ``<warehouse>/<db>.db/<table>/``, as Paimon lays it out."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

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
from lakestore.meta.schema import SchemaManager, new_schema
from lakestore.meta.schema_change import SchemaChange, apply_changes
from lakestore.system import SystemTable, split_system_table
from lakestore.table import Table

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*$")
DB_SUFFIX = ".db"


def _check_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidIdentifierError(f"invalid {what} name {name!r}: use letters, digits, '_' and '-'")
    return name


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
        return f"{self.warehouse}/{_check_name(name, 'database')}{DB_SUFFIX}"

    def database_exists(self, name: str) -> bool:
        return self.file_io.exists(self.database_path(name))

    def create_database(self, name: str, *, exist_ok: bool = False) -> None:
        path = self.database_path(name)
        if self.file_io.exists(path):
            if exist_ok:
                return
            raise DatabaseAlreadyExistsError(f"database {name!r} already exists")
        self.file_io.mkdirs(path)

    def list_databases(self) -> list[str]:
        return sorted(
            s.path.rsplit("/", 1)[-1][: -len(DB_SUFFIX)]
            for s in self.file_io.list_status(self.warehouse)
            if s.is_dir and s.path.endswith(DB_SUFFIX)
        )

    def drop_database(self, name: str, *, cascade: bool = False, missing_ok: bool = False) -> None:
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
        database, table = parse_identifier(identifier)
        return f"{self.database_path(database)}/{table}"

    def table_exists(self, identifier: str) -> bool:
        return bool(SchemaManager(self.file_io, self.table_path(identifier)).list_ids())

    def list_tables(self, database: str) -> list[str]:
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
        """``"db.t"``, or ``"db.t$branch_<name>"`` for one of its branches (Paimon's notation).
        ``"db.t$files"`` / ``"db.t$branch_<name>$files"`` name a system table: use
        ``get_system_table`` (typed) or ``Table.inspect``; this returns it too (a read-only
        ``lakestore.system.SystemTable``)."""
        data_identifier, system = split_system_table(identifier)
        if system is not None:
            return cast(Table, self.get_system_table(identifier))
        base, branch = split_branch(data_identifier)
        database, _ = parse_identifier(base)
        self._require_database(database)
        path = self.table_path(base)
        if not SchemaManager(self.file_io, branch_root(path, branch)).list_ids():
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        return Table(path, file_io=self.file_io, identifier=base, branch=branch)

    def get_system_table(self, identifier: str) -> SystemTable:
        """A system table: ``"db.t$snapshots"``, ``"db.t$branch_dev$files"`` (Paimon's names,
        ``lakestore.system.SYSTEM_TABLES``). Raises ``TableNotFoundError`` for a missing table or
        an unknown system table, ``InvalidIdentifierError`` for a malformed identifier."""
        data_identifier, system = split_system_table(identifier)
        if system is None:
            raise InvalidIdentifierError(f"{identifier!r} names no system table (use 'db.t$<system>')")
        return self.get_table(data_identifier).inspect.system_table(system)

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> Table:
        """Apply schema changes (``lakestore.meta.schema_change``) as a new ``schema-N``; retried
        when another writer published N first. Returns the table at the new schema. A branch
        (``"db.t$branch_<name>"``) evolves its own schema."""
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
        if not self.table_exists(identifier):
            if missing_ok:
                return
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        self.file_io.delete_dir(self.table_path(identifier))

    def rename_table(self, source: str, target: str) -> None:
        if not self.table_exists(source):
            raise TableNotFoundError(f"table {source!r} does not exist")
        target_db, _ = parse_identifier(target)
        self._require_database(target_db)
        if self.file_io.exists(self.table_path(target)):
            raise TableAlreadyExistsError(f"table {target!r} already exists")
        if not self.file_io.rename(self.table_path(source), self.table_path(target)):
            raise TableAlreadyExistsError(f"table {target!r} already exists")
