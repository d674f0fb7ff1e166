"""The DataFrame kinds ``PaimonIOManager`` writes and reads: ``pyarrow.Table``,
``pyarrow.RecordBatchReader``, pandas, Polars (``DataFrame`` and ``LazyFrame``) and PySpark.

pandas, Polars and PySpark are imported only when an output or an input's annotation is one of
theirs, so the I/O manager works with whichever of them is installed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import pyarrow as pa

import lakestore
from lakestore import Predicate
from resources.paimon.errors import UnsupportedOutputTypeError

ArrowData: TypeAlias = pa.Table | pa.RecordBatchReader


def _module(obj_or_type: Any) -> str:
    kind = obj_or_type if isinstance(obj_or_type, type) else type(obj_or_type)
    return kind.__module__ or ""


def is_spark(obj_or_type: Any) -> bool:
    """Whether ``obj_or_type`` is a PySpark DataFrame (classic or Spark Connect) or its class."""
    kind = obj_or_type if isinstance(obj_or_type, type) else type(obj_or_type)
    return kind.__name__ == "DataFrame" and _module(kind).startswith("pyspark.sql")


def to_arrow(obj: Any) -> ArrowData:
    """An Arrow table or stream of a non-Spark output (pandas without its index).

    Raises:
        UnsupportedOutputTypeError: ``obj`` is none of the supported kinds.
    """
    if isinstance(obj, (pa.Table, pa.RecordBatchReader)):
        return obj
    module = _module(obj)
    if module.startswith("pandas"):
        import pandas as pd  # noqa: PLC0415 - optional

        if isinstance(obj, pd.DataFrame):
            return pa.Table.from_pandas(obj, preserve_index=False)
    if module.startswith("polars"):
        import polars as pl  # noqa: PLC0415 - optional

        if isinstance(obj, pl.LazyFrame):
            obj = obj.collect()
        if isinstance(obj, pl.DataFrame):
            return obj.to_arrow()
    raise UnsupportedOutputTypeError(
        f"PaimonIOManager cannot store a {type(obj).__module__}.{type(obj).__qualname__}: return a pyarrow.Table,"
        " pyarrow.RecordBatchReader, pandas or Polars DataFrame, or a PySpark DataFrame"
    )


def spark_arrow_schema(df: Any) -> pa.Schema:
    """The Arrow schema of a PySpark DataFrame (no job runs)."""
    from pyspark.sql.pandas.types import to_arrow_schema  # noqa: PLC0415 - optional

    return to_arrow_schema(df.schema)


def read_as(table: lakestore.Table, target: Any, *, columns: Sequence[str] | None, filter: Predicate | None) -> Any:  # noqa: A002
    """The table's rows (``columns`` and ``filter`` pushed into the scan) as ``target``, an input's
    annotation: ``pyarrow.Table`` (also for no or an unknown-to-Dagster annotation),
    ``pyarrow.RecordBatchReader`` (streamed), pandas, Polars ``DataFrame``/``LazyFrame`` or a
    PySpark DataFrame (read distributed through ``lakestore.spark.read_dataframe`` in the active
    session, or a new one).

    Raises:
        UnsupportedOutputTypeError: an annotation none of the above.
        SchemaMismatchError: a selected column does not exist.
    """
    if target is None or target is Any or target is pa.Table or target is object:
        return table.to_arrow(columns=columns, filter=filter)
    if target is pa.RecordBatchReader:
        return table.to_arrow_batch_reader(columns=columns, filter=filter)
    module = _module(target)
    if is_spark(target):
        from pyspark.sql import SparkSession  # noqa: PLC0415 - optional

        from lakestore.spark import read_dataframe  # noqa: PLC0415 - imports pyspark

        spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        return read_dataframe(spark, table, columns=columns, filter=filter)
    if module.startswith("pandas"):
        return table.to_pandas(columns=columns, filter=filter)
    if module.startswith("polars"):
        import polars as pl  # noqa: PLC0415 - optional

        frame = table.to_polars(columns=columns, filter=filter)
        return frame.lazy() if target is pl.LazyFrame else frame
    raise UnsupportedOutputTypeError(
        f"PaimonIOManager cannot load an input annotated {target!r}: use pyarrow.Table, pyarrow.RecordBatchReader,"
        " a pandas or Polars DataFrame (or LazyFrame), or a PySpark DataFrame"
    )
