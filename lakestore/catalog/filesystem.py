"""The filesystem catalog: ``<warehouse>/<db>.db/<table>/``, as Paimon lays it out."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from lakestore.catalog.base import (
    BRANCH_SEPARATOR,
    DB_SUFFIX,
    NewTable,
    _check_name,
    data_identifier,
    parse_identifier,
    publish_changes,
    split_branch,
)
from lakestore.catalog.base import Catalog as _Catalog
from lakestore.errors import DatabaseAlreadyExistsError, DatabaseNotFoundError, TableAlreadyExistsError, TableNotFoundError
from lakestore.meta.branch import branch_root
from lakestore.meta.schema import SchemaManager
from lakestore.meta.schema_change import SchemaChange
from lakestore.table import Table

__all__ = ["BRANCH_SEPARATOR", "DB_SUFFIX", "FileSystemCatalog", "parse_identifier", "split_branch"]


class FileSystemCatalog(_Catalog):
    """The filesystem catalog: databases are ``<name>.db`` folders of ``warehouse`` holding tables
    (``lakestore.Catalog(warehouse)``, or ``metastore=filesystem``).

    Args:
        warehouse: the warehouse directory: a local path or ``s3://bucket/path``.
        file_io: the file system to use (default: the one ``warehouse`` and ``options`` name).
        options: catalog options: S3 endpoint and credentials, ``lock.enabled``, ...

    Raises:
        OptionError: an unknown warehouse scheme or an invalid file-system option.

    Example::

        catalog = lakestore.Catalog("/tmp/warehouse")  # a FileSystemCatalog
    """

    # -- databases ----------------------------------------------------------------------------
    def database_path(self, name: str) -> str:
        """The directory of database ``name`` (``<warehouse>/<name>.db``).

        Raises:
            InvalidIdentifierError: ``name`` is not a valid database name.
        """
        return f"{self.warehouse}/{_check_name(name, 'database')}{DB_SUFFIX}"

    def database_exists(self, name: str) -> bool:
        return self.file_io.exists(self.database_path(name))

    def create_database(self, name: str, *, exist_ok: bool = False) -> None:
        """Create database ``name`` (its folder); see ``Catalog.create_database``."""
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
        """Delete database ``name`` and its folder (with ``cascade``, the tables in it); see
        ``Catalog.drop_database``."""
        path = self.database_path(name)
        if not self.file_io.exists(path):
            if missing_ok:
                return
            raise DatabaseNotFoundError(f"database {name!r} does not exist")
        if self.list_tables(name) and not cascade:
            raise TableAlreadyExistsError(f"database {name!r} is not empty; pass cascade=True")
        self.file_io.delete_dir(path)

    # -- tables -------------------------------------------------------------------------------
    def table_path(self, identifier: str) -> str:
        database, table = parse_identifier(identifier)
        return f"{self.database_path(database)}/{table}"

    def table_exists(self, identifier: str) -> bool:
        """Whether table ``"db.t"`` exists (its folder holds a schema).

        Raises:
            InvalidIdentifierError: ``identifier`` is not ``"database.table"``.
        """
        return bool(SchemaManager(self.file_io, self.table_path(identifier)).list_ids())

    def list_tables(self, database: str) -> list[str]:
        self._require_database(database)
        path = self.database_path(database)
        return sorted(
            s.path.rsplit("/", 1)[-1] for s in self.file_io.list_status(path) if s.is_dir and SchemaManager(self.file_io, s.path).list_ids()
        )

    def _create_table(self, new: NewTable, *, exist_ok: bool) -> Table:
        self._require_database(new.database)
        table_schema = new.table_schema()
        path = self.table_path(new.identifier)
        if not self._schemas(path).publish(table_schema):
            if exist_ok:
                return self.get_table(new.identifier)
            raise TableAlreadyExistsError(f"table {new.identifier!r} already exists")
        return Table(path, file_io=self.file_io, identifier=new.identifier, snapshot_commit=self._snapshot_commit())

    def get_table(self, identifier: str) -> Table:
        base, branch = data_identifier(identifier)
        database, _ = parse_identifier(base)
        self._require_database(database)
        path = self.table_path(base)
        if not SchemaManager(self.file_io, branch_root(path, branch)).list_ids():
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        return Table(path, file_io=self.file_io, identifier=base, branch=branch, snapshot_commit=self._snapshot_commit())

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> Table:
        base, branch = split_branch(identifier)
        path = self.table_path(base)
        publish_changes(self._schemas(branch_root(path, branch)), identifier, changes)
        return Table(path, file_io=self.file_io, identifier=base, branch=branch, snapshot_commit=self._snapshot_commit())

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


_MOVED = {"Catalog": "lakestore.Catalog (lakestore.catalog.base.Catalog); the filesystem implementation is FileSystemCatalog"}


def __getattr__(name: str) -> Any:
    """``lakestore.catalog.filesystem.Catalog`` (the factory and filesystem catalog before the
    abstract base) still answers, with a ``DeprecationWarning`` naming the new place, for one
    minor release."""
    if name in _MOVED:
        warnings.warn(
            f"lakestore.catalog.filesystem.{name} is deprecated and will be removed in the next minor release: use {_MOVED[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return _Catalog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
