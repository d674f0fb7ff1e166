"""Typed errors. Every failure a user can cause or observe has its own class."""


class LakestoreError(Exception):
    """Base class of every error lakestore raises on purpose."""


class CatalogError(LakestoreError):
    """A catalog operation failed: the database or table is missing, exists already, or is misnamed."""


class DatabaseNotFoundError(CatalogError):
    """The named database does not exist in the catalog."""


class DatabaseAlreadyExistsError(CatalogError):
    """A database of that name exists already (pass ``exist_ok=True`` to accept it)."""


class TableNotFoundError(CatalogError):
    """The named table does not exist in the catalog."""


class TableAlreadyExistsError(CatalogError):
    """A table of that name exists already (pass ``exist_ok=True`` to accept it)."""


class InvalidIdentifierError(CatalogError):
    """A database or table name is not ``database.table`` of letters, digits, ``_`` and ``-``."""


class OptionError(LakestoreError):
    """An option value is invalid, unknown, or names a Paimon feature lakestore does not implement."""


class UnsupportedTableError(OptionError):
    """An existing table uses a Paimon feature lakestore does not implement, so this operation
    could change what Paimon reads. ``options`` names the table options responsible."""

    def __init__(self, message: str, *, options: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.options = options


class UnsupportedTypeError(LakestoreError):
    """A column type lakestore cannot read or write (nested types, for now)."""


class SchemaMismatchError(LakestoreError):
    """Written data does not match the table schema."""


class NullKeyError(SchemaMismatchError):
    """A primary-key column holds a null."""


class PartitionValueError(LakestoreError):
    """A partition value cannot be turned into a partition path or does not match an overwrite."""


class CorruptMetadataError(LakestoreError):
    """A metadata or data file cannot be parsed. The message names the file."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"corrupt file {path}: {reason}")
        self.path = path
        self.reason = reason


class DataFileMissingError(CorruptMetadataError):
    """A data file a snapshot references is gone: the snapshot expired meanwhile, or the table
    is damaged."""


class SnapshotNotFoundError(LakestoreError):
    """The requested snapshot, timestamp or watermark has no snapshot (never written, or expired)."""


class CommitError(LakestoreError):
    """A commit did not land; nothing it wrote is referenced by any snapshot."""


class CommitConflictError(CommitError):
    """The commit conflicts with one that landed first; retrying cannot fix it."""


class CommitRetriesExhaustedError(CommitError):
    """Concurrent commits kept winning the race for the next snapshot id until the retry budget ran out."""


class MergeEngineError(LakestoreError):
    """A row cannot be merged by the table's merge engine (e.g. an unsupported retraction)."""


# -- lifecycle (tags, rollback, schema evolution) ------------------------------------------------
class TagNotFoundError(LakestoreError):
    """The named tag does not exist."""


class TagAlreadyExistsError(LakestoreError):
    """A tag of that name exists already (tags are never overwritten)."""


class InvalidTagNameError(LakestoreError, ValueError):
    """A tag name Paimon refuses: blank, all digits (``VERSION AS OF 5`` means a snapshot), or
    holding ``/`` or starting with ``.``."""


class SchemaChangeError(LakestoreError):
    """An ``alter_table`` change Paimon forbids (key columns, narrowing types, unknown columns)."""


class BranchError(LakestoreError):
    """A branch operation Paimon forbids: the branch exists already, does not exist, or is empty."""


# -- publishing and locking ----------------------------------------------------------------------
class LockAcquireTimeoutError(LakestoreError):
    """The catalog lock stayed held by another process for longer than ``lock-acquire-timeout``."""


class UnsafePublishError(LakestoreError):
    """Committing on object storage without a safe create-if-absent mechanism."""


# -- catalog databases (Paimon's JDBC catalog and its lock) --------------------------------------
class CatalogDatabaseError(LakestoreError):
    """The SQL database behind a JDBC catalog, the Hive Metastore behind a Hive catalog, or the
    catalog lock cannot be used; the message says what to change."""


class InvalidCatalogUriError(CatalogDatabaseError, OptionError):
    """The ``uri`` option is missing or not a JDBC URI lakestore can open
    (``jdbc:sqlite:<file>``, ``jdbc:postgresql://host:port/db``), or, for ``metastore=hive``, not
    a Hive Metastore address (``thrift://host:port``)."""


class MissingDriverError(CatalogDatabaseError, OptionError):
    """The database driver ``uri`` needs is not installed (psycopg for PostgreSQL:
    ``pip install 'lakestore[postgres]'``; the Hive Metastore client for ``metastore=hive``:
    ``pip install 'lakestore[hive]'``)."""


class CatalogUnreachableError(CatalogDatabaseError):
    """The catalog database or Hive Metastore refused the connection or could not be reached
    (server down, wrong host or port, bad credentials, unwritable SQLite file)."""


class HiveMetastoreError(CatalogDatabaseError):
    """The Hive Metastore refused a call (a ``MetaException``, e.g. a location it cannot create);
    the message carries the metastore's reason."""


class UnsupportedPaimonTypeError(UnsupportedTableError, UnsupportedTypeError):
    """A table's column has a Paimon type lakestore cannot read or write (VARIANT, BLOB): the
    table is refused by name, it is not corrupt."""


# -- catalog services ----------------------------------------------------------------------------
class RestCatalogAccessError(CatalogError):
    """The REST catalog server refused the token (401) or the operation (403)."""


class AuthError(LakestoreError):
    """An authentication store operation failed: unknown principal, bad grant scope or level."""


# -- confinement and commit validation -----------------------------------------------------------
class PathOutsideTableError(CorruptMetadataError):
    """A path named by a table's metadata (a manifest entry, an ``_EXTERNAL_PATH``, an index
    or manifest file name) resolves outside the table's folders and its declared
    ``data-file.external-paths`` (after normalisation, ``..`` and symbolic links). Raised
    before anything is deleted: the operation that met it (expiration, rollback, orphan
    cleanup, tag or branch deletion, an aborted commit) deleted nothing. ``paths`` names the
    offending paths as the metadata spells them."""

    def __init__(self, source: str, paths: tuple[str, ...]) -> None:
        shown = ", ".join(repr(p) for p in paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(source, f"names paths outside the table's folders: {shown}")
        self.paths = paths


class InvalidCommitError(CommitError):
    """A snapshot offered for publication (through the REST catalog, or found by
    ``Table.maintenance.check()``) names a file outside the table, a file that does not exist,
    a schema the table does not have (or that was not written through the catalog server), or
    holds a field outside Paimon's ranges. Nothing was published."""
