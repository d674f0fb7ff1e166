"""lakestore: Apache Paimon tables in Python."""

from lakestore.catalog import Catalog
from lakestore.commit.commit import TableCommit
from lakestore.errors import (
    CatalogError,
    CommitConflictError,
    CommitError,
    CommitRetriesExhaustedError,
    CorruptMetadataError,
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    InvalidIdentifierError,
    LakestoreError,
    MergeEngineError,
    NullKeyError,
    OptionError,
    PartitionValueError,
    SchemaMismatchError,
    SnapshotNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedTableError,
    UnsupportedTypeError,
)
from lakestore.lifecycle import ExpireResult, OrphanResult, Tag
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.file_info import FileInfo, IndexFileInfo
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.read.predicate import Predicate, col
from lakestore.table import Table
from lakestore.write.table_write import TableWrite

__version__ = "0.1.0"

__all__ = [
    "BATCH_COMMIT_IDENTIFIER",
    "Catalog",
    "CatalogError",
    "CommitConflictError",
    "CommitError",
    "CommitMessage",
    "CommitRetriesExhaustedError",
    "CorruptMetadataError",
    "DatabaseAlreadyExistsError",
    "DatabaseNotFoundError",
    "ExpireResult",
    "FileInfo",
    "IndexFileInfo",
    "InvalidIdentifierError",
    "LakestoreError",
    "MergeEngineError",
    "NullKeyError",
    "OptionError",
    "OrphanResult",
    "PartitionValueError",
    "Predicate",
    "SchemaMismatchError",
    "Snapshot",
    "SnapshotNotFoundError",
    "Table",
    "Tag",
    "TableAlreadyExistsError",
    "TableCommit",
    "TableNotFoundError",
    "TableWrite",
    "UnsupportedTableError",
    "UnsupportedTypeError",
    "col",
]
