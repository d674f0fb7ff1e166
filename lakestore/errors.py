"""Typed errors. Every failure a user can cause or observe has its own class."""


class LakestoreError(Exception):
    """Base class of every error lakestore raises on purpose."""


class CatalogError(LakestoreError):
    pass


class DatabaseNotFoundError(CatalogError):
    pass


class DatabaseAlreadyExistsError(CatalogError):
    pass


class TableNotFoundError(CatalogError):
    pass


class TableAlreadyExistsError(CatalogError):
    pass


class InvalidIdentifierError(CatalogError):
    pass


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
    pass


class CommitError(LakestoreError):
    pass


class CommitConflictError(CommitError):
    """The commit conflicts with one that landed first; retrying cannot fix it."""


class CommitRetriesExhaustedError(CommitError):
    pass


class MergeEngineError(LakestoreError):
    """A row cannot be merged by the table's merge engine (e.g. an unsupported retraction)."""


# -- lifecycle (tags, rollback, schema evolution) ------------------------------------------------
class TagNotFoundError(LakestoreError):
    pass


class TagAlreadyExistsError(LakestoreError):
    pass


class SchemaChangeError(LakestoreError):
    """An ``alter_table`` change Paimon forbids (key columns, narrowing types, unknown columns)."""


class BranchError(LakestoreError):
    """A branch operation Paimon forbids: the branch exists already, does not exist, or is empty."""
