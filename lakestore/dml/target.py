"""What the row-level operations need of a table, and the rows a filter selects."""

from __future__ import annotations

from typing import Protocol

import pyarrow as pa

from lakestore.commit.protocol import WriteTarget
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.read.planner import ScanPlanner
from lakestore.read.predicate import Predicate
from lakestore.store import FileStore


class RowChangeTable(WriteTarget, Protocol):
    """The table a row-level change writes to (``lakestore.Table`` is one): its ``FileStore``
    (files, snapshots, manifests, reads of splits), its schema, and its writes and commits."""

    @property
    def store(self) -> FileStore: ...

    schema: TableSchema


def matching_rows(table: RowChangeTable, snapshot: Snapshot | None, predicate: Predicate | None) -> pa.Table:
    """The rows of ``snapshot`` (merged, as a batch read sees them) that ``predicate`` selects,
    every column, read with the table's current schema (as Paimon's DELETE and UPDATE read them)."""
    schema = table.schema
    splits = ScanPlanner(schema, table.store.manifests()).plan(snapshot, predicate)
    return table.store.split_reader(schema).read_all(splits, schema.field_names, predicate, schema.arrow_schema())
