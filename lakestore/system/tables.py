"""Paimon's system tables of one table: the ``inspect`` namespace (``table.inspect.files()``) and
the read-only ``SystemTable`` a catalog returns for ``"db.t$files"``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypedDict, Unpack

import pyarrow as pa

from lakestore.errors import InvalidIdentifierError, SchemaMismatchError, TableNotFoundError, UnsupportedTableError
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.meta.schema import TableSchema
from lakestore.system import files as _files
from lakestore.system import metadata as _metadata
from lakestore.system import rows as _rows
from lakestore.system.source import TableState, TimeTravel

if TYPE_CHECKING:
    import pandas as pd

SYSTEM_SEPARATOR = "$"


class TravelArgs(TypedDict, total=False):
    """The snapshot a system table that reads one looks at (at most one; default: the latest):
    ``snapshot_id``, ``tag``, or ``timestamp_ms`` (the last committed by then)."""

    snapshot_id: int | None
    tag: str | None
    timestamp_ms: int | None


BRANCH_PREFIX = "branch_"


@dataclass(frozen=True)
class _Kind:
    read: Callable[[TableState, TimeTravel], pa.Table]
    schema: Callable[[TableSchema], pa.Schema]
    travels: bool  # reads a snapshot (takes snapshot_id= / tag= / timestamp_ms=)


def _fixed(schema: pa.Schema) -> Callable[[TableSchema], pa.Schema]:
    return lambda _: schema


def _untimed(read: Callable[[TableState], pa.Table]) -> Callable[[TableState, TimeTravel], pa.Table]:
    return lambda state, _: read(state)


# Paimon 2.0.0's system tables lakestore implements, by the name after ``$``.
SYSTEM_TABLES: dict[str, _Kind] = {
    "snapshots": _Kind(_untimed(_metadata.snapshots), _fixed(_metadata.SNAPSHOTS), False),
    "schemas": _Kind(_untimed(_metadata.schemas), _fixed(_metadata.SCHEMAS), False),
    "options": _Kind(_untimed(_metadata.options), _fixed(_metadata.OPTIONS), False),
    "tags": _Kind(_untimed(_metadata.tags), _fixed(_metadata.TAGS), False),
    "branches": _Kind(_untimed(_metadata.branches), _fixed(_metadata.BRANCHES), False),
    "consumers": _Kind(_untimed(_metadata.consumers), _fixed(_metadata.CONSUMERS), False),
    "statistics": _Kind(_metadata.statistics, _fixed(_metadata.STATISTICS), True),
    "files": _Kind(_files.files, _fixed(_files.FILES), True),
    "manifests": _Kind(_files.manifests, _fixed(_files.MANIFESTS), True),
    "partitions": _Kind(_files.partitions, _fixed(_files.PARTITIONS), True),
    "buckets": _Kind(_untimed(_files.buckets), _fixed(_files.BUCKETS), False),  # Paimon's reads the latest
    "table_indexes": _Kind(_files.table_indexes, _fixed(_files.TABLE_INDEXES), True),
    "aggregation_fields": _Kind(_untimed(_metadata.aggregation_fields), _fixed(_metadata.AGGREGATION_FIELDS), False),
    "file_key_ranges": _Kind(_files.file_key_ranges, _fixed(_files.FILE_KEY_RANGES), True),
    "ro": _Kind(_rows.read_optimized, lambda schema: schema.arrow_schema(), True),
    "row_tracking": _Kind(_rows.row_tracking, _rows.row_tracking_schema, True),
    "audit_log": _Kind(_rows.audit_log, _rows.audit_log_schema, True),
    "binlog": _Kind(_rows.binlog, _rows.binlog_schema, True),
}


def split_system_table(identifier: str) -> tuple[str, str | None]:
    """``"db.t$files"`` -> (``"db.t"``, ``"files"``); ``"db.t$branch_dev$files"`` ->
    (``"db.t$branch_dev"``, ``"files"``); a data table's identifier -> (it, None). Paimon's
    object names: ``table``, ``table$branch_<b>``, ``table$<system>``, ``table$branch_<b>$<system>``.

    Raises ``InvalidIdentifierError`` for other uses of ``$``, ``TableNotFoundError`` for a
    system table lakestore does not know."""
    if not isinstance(identifier, str) or SYSTEM_SEPARATOR not in identifier:
        return identifier, None
    base, *rest = identifier.split(SYSTEM_SEPARATOR)
    if len(rest) == 1 and rest[0].startswith(BRANCH_PREFIX):
        return identifier, None
    if len(rest) == 2 and not rest[0].startswith(BRANCH_PREFIX) or len(rest) > 2:
        raise InvalidIdentifierError(
            f"invalid table identifier {identifier!r}: use 'db.t', 'db.t$branch_<b>', 'db.t$<system>' or 'db.t$branch_<b>$<system>'"
        )
    system = rest[-1].lower()
    if system not in SYSTEM_TABLES:
        raise TableNotFoundError(
            f"table {identifier!r} does not exist: unknown system table {rest[-1]!r} (known: {', '.join(SYSTEM_TABLES)})"
        )
    return SYSTEM_SEPARATOR.join([base, *rest[:-1]]), system


class SystemTables:
    """``table.inspect``: Paimon's system tables of the table (on its branch) as Arrow tables,
    with Paimon 2.0.0's column names, order and types. Timestamps are local wall-clock time, as
    Paimon's TIMESTAMP(3) columns show them. The tables that read a snapshot take ``snapshot_id=``
    ``tag=`` or ``timestamp_ms=`` (default: the latest). Each raises what reading the table's metadata raises
    (``CorruptMetadataError``, ``SnapshotNotFoundError``, ``TagNotFoundError``)."""

    def __init__(self, state: TableState) -> None:
        self._state = state

    def table(self, name: str, **travel: Unpack[TravelArgs]) -> pa.Table:
        """The system table ``name`` (``"files"``, ...), of the latest snapshot or the one
        ``snapshot_id``, ``tag`` or ``timestamp_ms`` (the last committed by then) names. Raises
        ``TableNotFoundError`` for an unknown name, ``ValueError`` for time travel on a table that
        reads no snapshot or more than one time-travel argument."""
        kind = SYSTEM_TABLES.get(name.lower())
        if kind is None:
            raise TableNotFoundError(f"unknown system table {name!r} (known: {', '.join(SYSTEM_TABLES)})")
        at = TimeTravel(**travel)
        given = [x for x in (at.snapshot_id, at.tag, at.timestamp_ms) if x is not None]
        if given and not kind.travels:
            raise ValueError(f"system table {name!r} reads no snapshot: it takes no snapshot_id=, tag= or timestamp_ms=")
        if len(given) > 1:
            raise ValueError("give one of snapshot_id=, tag=, timestamp_ms=")
        return kind.read(self._state, TimeTravel(**travel))

    def system_table(self, name: str) -> SystemTable:
        """System table ``name`` as a read-only table object (what ``"db.t$<name>"`` names in a
        catalog). Raises ``TableNotFoundError`` for an unknown name."""
        if name.lower() not in SYSTEM_TABLES:
            raise TableNotFoundError(f"unknown system table {name!r} (known: {', '.join(SYSTEM_TABLES)})")
        return SystemTable(self._state, name.lower())

    def schema(self, name: str) -> pa.Schema:
        """The columns of system table ``name``."""
        kind = SYSTEM_TABLES.get(name.lower())
        if kind is None:
            raise TableNotFoundError(f"unknown system table {name!r} (known: {', '.join(SYSTEM_TABLES)})")
        return kind.schema(self._state.store.schema)

    def snapshots(self) -> pa.Table:
        """Every retained snapshot: id, schema, commit user/identifier/kind/time, manifest lists, counts."""
        return self.table("snapshots")

    def schemas(self) -> pa.Table:
        """Every schema version, its fields, keys and options as JSON."""
        return self.table("schemas")

    def options(self) -> pa.Table:
        """The table's options (key, value)."""
        return self.table("options")

    def tags(self) -> pa.Table:
        """Every tag: its snapshot, commit time, record count, creation time and retention."""
        return self.table("tags")

    def branches(self) -> pa.Table:
        """The branches other than main and when each was created."""
        return self.table("branches")

    def consumers(self) -> pa.Table:
        """Every consumer and the next snapshot it will read."""
        return self.table("consumers")

    def statistics(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """The snapshot's statistics (Paimon's ``ANALYZE``), empty when it has none."""
        return self.table("statistics", **travel)

    def files(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """Every data file of the snapshot: partition, bucket, path, level, rows, bytes, keys, statistics."""
        return self.table("files", **travel)

    def manifests(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """The snapshot's manifests: data (base, delta), then changelog."""
        return self.table("manifests", **travel)

    def partitions(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """Per partition: rows, bytes, files, last update, buckets."""
        return self.table("partitions", **travel)

    def buckets(self) -> pa.Table:
        """Per partition and bucket of the latest snapshot: rows, bytes, files, last update."""
        return self.table("buckets")

    def table_indexes(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """The snapshot's index files (key hashes, deletion vectors)."""
        return self.table("table_indexes", **travel)

    def file_key_ranges(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """``files`` without statistics: placement, level, rows and key range of every data file."""
        return self.table("file_key_ranges", **travel)

    def aggregation_fields(self) -> pa.Table:
        """Per column: its type and its ``fields.<column>.*`` options (aggregate functions, ...)."""
        return self.table("aggregation_fields")

    def read_optimized(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """Paimon's ``$ro``: a primary-key table's top-level rows only (no merge), an append table's rows."""
        return self.table("ro", **travel)

    def row_tracking(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """A row-tracking table's rows with ``_ROW_ID`` and ``_SEQUENCE_NUMBER``."""
        return self.table("row_tracking", **travel)

    def audit_log(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """The snapshot's rows with a leading ``rowkind`` column, deleted keys kept as ``-D``."""
        return self.table("audit_log", **travel)

    def binlog(self, **travel: Unpack[TravelArgs]) -> pa.Table:
        """``audit_log`` with each column packed in an array."""
        return self.table("binlog", **travel)


# What a SystemTable refuses by name: the data table's writing methods, and the writing verbs of
# its ``table.maintenance`` and ``table.manage`` namespaces.
_REFUSED = (
    "write_arrow",
    "new_write",
    "new_commit",
    "compact",
    "update_columns",
    "drop_partitions",
    "stream",
)
_REFUSED_IN_NAMESPACE = {
    "maintenance": ("compact", "expire_snapshots", "expire_partitions", "remove_orphan_files"),
    "manage": ("create_tag", "delete_tag", "rename_tag", "create_branch", "delete_branch", "fast_forward", "rollback_to", "reset_consumer"),
}


class _RefusedNamespace:
    """``system_table.maintenance`` / ``.manage``: the writing verbs of the data table's namespace,
    refused by name."""

    def __init__(self, table: SystemTable, namespace: str) -> None:
        self._table = table
        self._namespace = namespace

    def __getattr__(self, name: str) -> Any:
        if name in _REFUSED_IN_NAMESPACE[self._namespace]:
            return lambda *args, **kwargs: self._table._refuse(name)
        raise AttributeError(f"{self._namespace!r} of a system table has no attribute {name!r}")


class SystemTable:
    """A system table (``catalog.get_system_table("db.t$files")``): read-only; ``to_arrow()`` reads it,
    ``schema`` gives its columns. Writing methods, and the writing verbs of ``.maintenance`` and
    ``.manage``, raise ``UnsupportedTableError``."""

    def __init__(self, state: TableState, name: str) -> None:
        self._state = state
        self._tables = SystemTables(state)
        self.name = name
        branch = "" if state.store.branch == MAIN_BRANCH else f"{SYSTEM_SEPARATOR}{BRANCH_PREFIX}{state.store.branch}"
        self.identifier = f"{state.store.identifier}{branch}{SYSTEM_SEPARATOR}{name}"
        self.path = state.store.path
        self.branch = state.store.branch
        self.file_io = state.store.file_io

    def __repr__(self) -> str:
        return f"SystemTable({self.identifier!r})"

    @property
    def schema(self) -> pa.Schema:
        """The system table's columns (Paimon 2.0.0's)."""
        return self._tables.schema(self.name)

    arrow_schema = schema
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()

    @property
    def time_travel(self) -> bool:
        """Whether the table reads a snapshot (takes ``snapshot_id=`` / ``tag=``)."""
        return SYSTEM_TABLES[self.name].travels

    def to_arrow(self, *, columns: Sequence[str] | None = None, **travel: Unpack[TravelArgs]) -> pa.Table:
        """The rows, optionally only ``columns`` (in that order); time travel as
        ``SystemTables.table``. Raises ``SchemaMismatchError`` naming unknown columns."""
        data = self._tables.table(self.name, **travel)
        if columns is None:
            return data
        unknown = [c for c in columns if c not in data.column_names]
        if unknown:
            raise SchemaMismatchError(f"unknown columns {unknown} of system table {self.identifier} (columns: {data.column_names})")
        return data.select(list(columns))

    def to_batches(self, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        yield from self.to_arrow(**kwargs).to_batches()

    def to_pandas(self, **kwargs: Any) -> pd.DataFrame:
        return self.to_arrow(**kwargs).to_pandas()

    def _refuse(self, operation: str) -> NoReturn:
        raise UnsupportedTableError(f"cannot {operation} system table {self.identifier}: system tables are read-only")

    def __getattr__(self, name: str) -> Any:
        if name in _REFUSED:
            return lambda *args, **kwargs: self._refuse(name)
        if name in _REFUSED_IN_NAMESPACE:
            return _RefusedNamespace(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
