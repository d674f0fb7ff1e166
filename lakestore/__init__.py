"""lakestore: Apache Paimon tables in Python."""

import os

# Before pyarrow loads (no effect once it has; a caller's own setting wins): pyarrow's mimalloc
# commits each new arena eagerly, 0.1-0.25 s of system time in a process's first large read.
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")

from lakestore.catalog import Catalog  # noqa: E402 - after the allocator setting
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
