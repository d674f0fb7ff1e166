"""Distributed read of a lakestore table into a Spark DataFrame.

The driver plans splits (one per partition and bucket, pruned by the filter) and groups them
into at most ``4 x defaultParallelism`` tasks balanced by row count; each task reads its splits
with lakestore's SplitReader (merge-on-read included, filter applied exactly) and yields Arrow
batches through ``mapInArrow``. The splits travel inside the task closure, which PySpark
broadcasts when it is large.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from lakestore.errors import SchemaMismatchError
from lakestore.io.fileio import FileIO
from lakestore.read.predicate import Predicate
from lakestore.read.scan import Split
from lakestore.spark.types import spark_arrow_schema, spark_schema, to_spark_arrow
from lakestore.table import Table

_BATCH_ROWS = 65536


def group_splits(splits: Sequence[Split], groups: int) -> list[list[Split]]:
    """Longest-processing-time packing of splits into ``groups`` lists of similar row counts."""
    groups = max(1, min(groups, len(splits)))
    heap = [(0, i) for i in range(groups)]
    out: list[list[Split]] = [[] for _ in range(groups)]
    for split in sorted(splits, key=lambda s: s.row_count, reverse=True):
        load, i = heapq.heappop(heap)
        out[i].append(split)
        heapq.heappush(heap, (load + split.row_count, i))
    return [g for g in out if g]


def _read_groups(
    path: str, file_io: FileIO, groups: list[list[Split]], columns: list[str], predicate: Predicate | None, target: pa.Schema
) -> Any:
    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        reader = Table.from_path(path, file_io=file_io).split_reader()
        for batch in batches:
            for index in batch.column(0).to_pylist():
                for split in groups[index]:
                    data = to_spark_arrow(reader.read(split, columns, predicate), target)
                    yield from data.to_batches(max_chunksize=_BATCH_ROWS)

    return read


def read_dataframe(
    spark: SparkSession,
    table: Table,
    *,
    columns: Sequence[str] | None = None,
    filter: Predicate | None = None,
    snapshot_id: int | None = None,
    max_tasks: int | None = None,
) -> DataFrame:  # noqa: A002
    """The table's rows (at ``snapshot_id``, default latest) as a Spark DataFrame.

    ``filter`` prunes splits and files on the driver and is applied exactly on the executors.
    ``max_tasks`` caps the read tasks (default ``4 x spark.sparkContext.defaultParallelism``).
    """
    names = table.schema.field_names
    selected = list(columns) if columns is not None else names
    unknown = [c for c in selected if c not in names]
    if filter is not None:
        unknown += [c for c in filter.columns() if c not in names]
    if unknown:
        raise SchemaMismatchError(f"unknown columns {sorted(set(unknown))} (columns: {names})")
    schema = spark_schema(table.schema, selected)
    splits = table.plan(filter=filter, snapshot_id=snapshot_id)
    if not splits:
        return spark.createDataFrame([], schema)
    cap = max_tasks or 4 * spark.sparkContext.defaultParallelism
    groups = group_splits(splits, cap)
    target = spark_arrow_schema(table.schema, selected)
    tasks = spark.range(0, len(groups), 1, numPartitions=len(groups))
    return tasks.mapInArrow(_read_groups(table.path, table.file_io, groups, selected, filter, target), schema)
