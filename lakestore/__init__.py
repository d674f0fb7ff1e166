"""lakestore: Apache Paimon tables in Python."""

import os

# Before pyarrow loads (no effect once it has; a caller's own setting wins): pyarrow's mimalloc
# commits each new arena eagerly, 0.1-0.25 s of system time in a process's first large read.
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")

from lakestore.catalog import Catalog  # noqa: E402 - after the allocator setting
from lakestore.commit.callbacks import CommitCallback, CommitProperties
from lakestore.commit.commit import CommitResult, TableCommit
from lakestore.commit.protocol import CommitId, CommitOutcome
from lakestore.commit.snapshot_commit import CatalogSnapshotCommit, RenamingSnapshotCommit, SnapshotCommit
from lakestore.errors import (
    AuthError,
    BranchError,
    CatalogDatabaseError,
    CatalogError,
    CatalogUnreachableError,
    CommitConflictError,
    CommitError,
    CommitRetriesExhaustedError,
    CorruptMetadataError,
    DatabaseAlreadyExistsError,
    DatabaseNotFoundError,
    DataFileMissingError,
    HiveMetastoreError,
    InvalidCatalogUriError,
    InvalidCommitError,
    InvalidIdentifierError,
    InvalidTagNameError,
    LakestoreError,
    LockAcquireTimeoutError,
    MergeEngineError,
    MissingDriverError,
    NullKeyError,
    OptionError,
    PartitionValueError,
    PathOutsideTableError,
    RestCatalogAccessError,
    SchemaChangeError,
    SchemaMismatchError,
    SnapshotNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TagAlreadyExistsError,
    TagNotFoundError,
    UnsafePublishError,
    UnsupportedPaimonTypeError,
    UnsupportedTableError,
    UnsupportedTypeError,
)
from lakestore.lifecycle import ExpireResult, OrphanResult
from lakestore.lifecycle.check import TableCheck, UnreferencedCommit
from lakestore.maintenance import TableMaintenance
from lakestore.manage import TableManagement
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.file_info import FileInfo, IndexFileInfo
from lakestore.meta.schema_change import (
    AddColumn,
    DropColumn,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnType,
    UpdateComment,
)
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.meta.tag import Tag
from lakestore.read.planner import Split
from lakestore.read.predicate import Predicate, col
from lakestore.scan import ScanSpec, TableScan
from lakestore.scan.changes import StreamScan
from lakestore.store import FileStore
from lakestore.table import Table
from lakestore.write.table_write import TableWrite

__version__ = "0.2.0.dev0"

__all__ = [
    "AddColumn",
    "AuthError",
    "BATCH_COMMIT_IDENTIFIER",
    "BranchError",
    "Catalog",
    "CatalogDatabaseError",
    "CatalogError",
    "CatalogSnapshotCommit",
    "CatalogUnreachableError",
    "CommitCallback",
    "CommitConflictError",
    "CommitError",
    "CommitId",
    "CommitMessage",
    "CommitOutcome",
    "CommitProperties",
    "CommitResult",
    "CommitRetriesExhaustedError",
    "CorruptMetadataError",
    "DataFileMissingError",
    "DatabaseAlreadyExistsError",
    "DatabaseNotFoundError",
    "DropColumn",
    "ExpireResult",
    "FileInfo",
    "FileStore",
    "HiveMetastoreError",
    "IndexFileInfo",
    "InvalidCatalogUriError",
    "InvalidCommitError",
    "InvalidIdentifierError",
    "InvalidTagNameError",
    "LakestoreError",
    "LockAcquireTimeoutError",
    "MergeEngineError",
    "MissingDriverError",
    "NullKeyError",
    "OptionError",
    "OrphanResult",
    "PartitionValueError",
    "PathOutsideTableError",
    "Predicate",
    "RemoveOption",
    "RenameColumn",
    "RenamingSnapshotCommit",
    "RestCatalogAccessError",
    "ScanSpec",
    "SchemaChange",
    "SchemaChangeError",
    "SchemaMismatchError",
    "SetOption",
    "Snapshot",
    "SnapshotCommit",
    "SnapshotNotFoundError",
    "Split",
    "StreamScan",
    "Table",
    "TableAlreadyExistsError",
    "TableCheck",
    "TableCommit",
    "TableMaintenance",
    "TableManagement",
    "TableNotFoundError",
    "TableScan",
    "TableWrite",
    "Tag",
    "TagAlreadyExistsError",
    "TagNotFoundError",
    "UnreferencedCommit",
    "UnsafePublishError",
    "UnsupportedPaimonTypeError",
    "UnsupportedTableError",
    "UnsupportedTypeError",
    "UpdateColumnType",
    "UpdateComment",
    "col",
]
