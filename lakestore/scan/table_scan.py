"""The scan object: what a batch read of a table asks for (columns, filter, time travel or an
incremental range, limit), as an immutable value that a ``StoreScan`` of the table's store executes
(``lakestore.scan.executor``).

``table.scan(...)`` returns a :class:`TableScan`; ``.filter()`` / ``.select()`` / ``.limit()``
return new scans, and ``.plan()`` / ``.count()`` / ``.to_arrow()`` / ``.to_batches()`` /
``.to_arrow_batch_reader()`` / ``.to_pandas()`` / ``.to_polars()`` / ``.to_duckdb()`` /
``.to_ray()`` run it. ``Table.to_arrow(...)`` and friends are shortcuts for
``table.scan(...).to_arrow()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

import pyarrow as pa

from lakestore.meta.snapshot import Snapshot
from lakestore.read.planner import Split
from lakestore.read.predicate import Predicate
from lakestore.scan.incremental import Bounds

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl


@dataclass(frozen=True)
class ScanSpec:
    """What a scan reads. At most one of ``snapshot_id``, ``tag``, ``timestamp_ms``, ``watermark``
    (time travel), or an incremental range (``incremental_between`` /
    ``incremental_between_timestamp`` with ``incremental_scan_mode``)."""

    columns: tuple[str, ...] | None = None
    filter: Predicate | None = None
    snapshot_id: int | None = None
    tag: str | None = None
    timestamp_ms: int | None = None
    watermark: int | None = None
    limit: int | None = None
    incremental_between: Bounds | None = None
    incremental_between_timestamp: Bounds | None = None
    incremental_scan_mode: str | None = None

    def __post_init__(self) -> None:
        travel = [k for k in ("snapshot_id", "tag", "timestamp_ms", "watermark") if getattr(self, k) is not None]
        if len(travel) > 1:
            raise ValueError(f"give at most one of snapshot_id=, tag=, timestamp_ms=, watermark= (got {', '.join(travel)})")
        if self.limit is not None and (not isinstance(self.limit, int) or self.limit < 0):
            raise ValueError(f"limit must be a non-negative integer, got {self.limit!r}")

    @property
    def travel(self) -> tuple[int | None, str | None, int | None, int | None]:
        return (self.snapshot_id, self.tag, self.timestamp_ms, self.watermark)

    @property
    def incremental(self) -> bool:
        """Whether the scan names an incremental range (it reads a range of snapshots)."""
        return self.incremental_between is not None or self.incremental_between_timestamp is not None


class ScanSource(Protocol):
    """What executes a scan (``lakestore.scan.StoreScan``, over a table's ``FileStore``)."""

    @property
    def name(self) -> str: ...

    def snapshot(self, spec: ScanSpec) -> Snapshot | None: ...

    def plan(self, spec: ScanSpec) -> list[Split]: ...

    def read_arrow(self, spec: ScanSpec) -> pa.Table: ...

    def read_batches(self, spec: ScanSpec, batch_size: int | None) -> pa.RecordBatchReader: ...


@dataclass(frozen=True)
class TableScan:
    """An immutable batch read of a table; build it with ``Table.scan()``.

    Example::

        scan = table.scan(columns=["id", "v"]).filter(lakestore.col("dt") == "2024-01-01")
        scan.count(), scan.to_arrow(), scan.to_polars()
    """

    source: ScanSource
    spec: ScanSpec = ScanSpec()

    # -- refining ----------------------------------------------------------------------------
    def filter(self, predicate: Predicate) -> TableScan:
        """This scan with ``predicate`` added (AND) to its filter.

        Raises:
            TypeError: ``predicate`` is not a lakestore predicate (``lakestore.col(...)``).
        """
        if not isinstance(predicate, Predicate):
            raise TypeError(f"filter takes a lakestore predicate (lakestore.col(...)), got {type(predicate).__name__}")
        combined = predicate if self.spec.filter is None else (self.spec.filter & predicate)
        return dataclasses.replace(self, spec=dataclasses.replace(self.spec, filter=combined))

    def select(self, *columns: str) -> TableScan:
        """This scan reading only ``columns`` (in that order)."""
        names = tuple(columns[0]) if len(columns) == 1 and not isinstance(columns[0], str) else tuple(columns)
        return dataclasses.replace(self, spec=dataclasses.replace(self.spec, columns=names))

    def with_limit(self, limit: int | None) -> TableScan:
        """This scan returning at most ``limit`` rows.

        Raises:
            ValueError: ``limit`` is negative or not an integer.
        """
        return dataclasses.replace(self, spec=dataclasses.replace(self.spec, limit=limit))

    # -- running -----------------------------------------------------------------------------
    def snapshot(self) -> Snapshot | None:
        """The snapshot this scan reads: the latest, or the one its time travel (or, without
        time-travel arguments, the table's ``scan.*`` options) names; None when nothing is
        committed yet.

        Example::

            table.scan(tag="2024-01-01").snapshot().id

        Raises:
            SnapshotNotFoundError: the time-travel target does not exist.
            TagNotFoundError: the named tag does not exist.
            UnsupportedTableError: the table uses a feature lakestore cannot read.
            ValueError: an incremental scan (it reads a range of snapshots).
        """
        return self.source.snapshot(self.spec)

    def plan(self) -> list[Split]:
        """The splits (one per partition and bucket) a read of this scan merges, as a
        ``lakestore.read.planner.ScanPlan`` (a list) whose ``files_skipped_by_index`` counts the data
        files that Paimon file indexes ruled out for the filter.

        Raises:
            SnapshotNotFoundError: the time-travel target does not exist.
            UnsupportedTableError: the table uses a feature lakestore cannot read.
        """
        return self.source.plan(self.spec)

    def to_arrow(self) -> pa.Table:
        """The rows (merge-on-read) as one Arrow table.

        Raises:
            SchemaMismatchError: a selected or filtered column does not exist.
            SnapshotNotFoundError: the time-travel target does not exist.
            UnsupportedTableError: the table uses a feature lakestore cannot read.
        """
        return self.source.read_arrow(self.spec)

    def to_arrow_batch_reader(self, *, batch_size: int | None = None) -> pa.RecordBatchReader:
        """The rows as a ``pyarrow.RecordBatchReader``, read split by split (bounded memory).

        Raises:
            SchemaMismatchError: a selected or filtered column does not exist.
            SnapshotNotFoundError: the time-travel target does not exist.
            UnsupportedTableError: the table uses a feature lakestore cannot read.
        """
        return self.source.read_batches(self.spec, batch_size)

    def to_batches(self, *, batch_size: int | None = None) -> Iterator[pa.RecordBatch]:
        """The rows of ``to_arrow`` in the same order, as record batches read split by split.

        Raises:
            SchemaMismatchError: a selected or filtered column does not exist.
            SnapshotNotFoundError: the time-travel target does not exist.
            UnsupportedTableError: the table uses a feature lakestore cannot read.
        """
        return iter(self.to_arrow_batch_reader(batch_size=batch_size))

    def count(self) -> int:
        """The number of rows the scan returns (reads only the narrowest column it needs).

        Raises:
            SchemaMismatchError: a selected or filtered column does not exist.
            SnapshotNotFoundError: the time-travel target does not exist.
            UnsupportedTableError: the table uses a feature lakestore cannot read.
        """
        columns = self.spec.columns
        if columns is None or len(columns) > 1:
            first = self.to_arrow_batch_reader().schema.names[:1] if columns is None else list(columns[:1])
            narrow = dataclasses.replace(self.spec, columns=tuple(first))
        else:
            narrow = self.spec
        return sum(batch.num_rows for batch in self.source.read_batches(narrow, None))

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow C stream of the rows: DuckDB, Polars and pyarrow read a scan directly."""
        return self.to_arrow_batch_reader().__arrow_c_stream__(requested_schema)

    def to_pandas(self) -> pd.DataFrame:
        """The rows as a pandas DataFrame (needs pandas).

        Raises:
            ImportError: pandas is not installed (and whatever ``to_arrow`` raises).
        """
        return self.to_arrow().to_pandas()

    def to_polars(self, *, lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
        """The rows as a Polars DataFrame (``lazy=True``: a LazyFrame over them). Needs polars.

        Raises:
            ImportError: polars is not installed.
        """
        try:
            import polars  # noqa: PLC0415 - optional dependency
        except ImportError as exc:
            raise ImportError("to_polars() needs the 'polars' package") from exc
        frame = cast("pl.DataFrame", polars.from_arrow(self.to_arrow()))
        return frame.lazy() if lazy else frame

    def to_duckdb(self, connection: Any = None, *, name: str | None = None) -> Any:
        """Register the rows in DuckDB as view ``name`` (default: the table identifier with ``_``
        for ``.``) and return the relation. Needs duckdb.

        Raises:
            ImportError: duckdb is not installed.
        """
        try:
            import duckdb  # noqa: PLC0415 - optional dependency
        except ImportError as exc:
            raise ImportError("to_duckdb() needs the 'duckdb' package") from exc
        con = connection or duckdb.connect()
        view = name or self.source.name.replace(".", "_")
        con.register(view, self.to_arrow())
        return con.table(view)

    def to_ray(self) -> Any:
        """The rows as a Ray Dataset (``ray.data.from_arrow``). Needs ray.

        Raises:
            ImportError: ray is not installed.
        """
        try:
            import ray.data  # noqa: PLC0415 - optional dependency
        except ImportError as exc:
            raise ImportError("to_ray() needs the 'ray' package (pip install 'ray[data]')") from exc
        return ray.data.from_arrow(self.to_arrow())


def scan_spec(columns: Sequence[str] | None = None, **fields: Any) -> ScanSpec:
    """A ``ScanSpec`` from keyword arguments as ``Table.scan`` takes them."""
    return ScanSpec(columns=tuple(columns) if columns is not None else None, **fields)


class ScanArgs(TypedDict, total=False):
    """The keyword arguments of ``Table.scan`` (for ``Table.to_pandas(**args)`` and friends)."""

    columns: Sequence[str] | None
    filter: Predicate | None
    snapshot_id: int | None
    tag: str | None
    timestamp_ms: int | None
    watermark: int | None
    limit: int | None
    incremental_between: Bounds | None
    incremental_between_timestamp: Bounds | None
    incremental_scan_mode: str | None
