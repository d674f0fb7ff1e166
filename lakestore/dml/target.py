"""What the row-level operations need of a table, and the rows a filter selects."""

from __future__ import annotations

from typing import Protocol

import pyarrow as pa

from lakestore.commit.commit import CommitHook, Overwrite, TableCommit
from lakestore.io.fileio import FileIO
from lakestore.meta.manifest import ManifestStore
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.predicate import Predicate
from lakestore.read.scan import ScanPlanner
from lakestore.read.split_read import SplitReader
from lakestore.write.table_write import TableWrite


class RowChangeTable(Protocol):
    """The table a row-level change writes to (``lakestore.Table`` is one)."""

    @property
    def path(self) -> str: ...

    @property
    def file_io(self) -> FileIO: ...

    schema: TableSchema

    def latest_snapshot(self) -> Snapshot | None: ...

    def manifests(self) -> ManifestStore: ...

    def split_reader(self, schema: TableSchema | None = None) -> SplitReader: ...

    def new_write(self, *, commit_user: str | None = None, overwrite: Overwrite = None) -> TableWrite: ...

    def new_commit(self, *, commit_user: str, hook: CommitHook | None = None) -> TableCommit: ...


def matching_rows(table: RowChangeTable, snapshot: Snapshot | None, predicate: Predicate | None) -> pa.Table:
    """The rows of ``snapshot`` (merged, as a batch read sees them) that ``predicate`` selects,
    every column, read with the table's current schema (as Paimon's DELETE and UPDATE read them)."""
    schema = table.schema
    splits = ScanPlanner(schema, table.manifests()).plan(snapshot, predicate)
    return table.split_reader(schema).read_all(splits, schema.field_names, predicate, schema.arrow_schema())
