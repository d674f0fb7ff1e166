"""Every difference between the pyspark versions lakestore's Spark path runs on, in one place.

lakestore runs on pyspark >= 4.0.5 (``MINIMUM_PYSPARK``; checked on 4.0.5, 4.1.4 and 4.3.0); an
older pyspark is refused when ``lakestore.spark`` is imported. The other modules of
``lakestore.spark`` take from here whatever differs between versions: nothing else looks at
pyspark's version. Features are detected (the API is there or not), not read off the version
number, so a release in between gets what it has.

What differs (pyspark 4.0 / 4.1 / 4.3), and what lakestore does where a feature is missing:

- Arrow UDFs (``functions.arrow_udf``; no / yes / yes): ``distribute`` adds the writer slot in one
  ``mapInArrow`` pass instead (every column crosses to Python once more, and only for bucket keys
  Spark SQL cannot hash: strings, decimals, timestamps, floats, binary); ``bucket_column`` raises
  ``OptionError``.
- Filter pushdown into Python data sources (``datasource.Filter``, ``pushFilters``; no / yes /
  yes): ``register(spark, filter_pushdown=True)`` raises ``OptionError``; Spark applies a query's
  filters itself (exact, no pruning); ``read_dataframe(filter=...)`` prunes on every version.
- An Arrow stream writer (``datasource.DataSourceStreamArrowWriter``; no / yes / yes):
  ``writeStream.format("paimon")`` raises ``OptionError`` (the row-based stream writer would run
  Python per row); ``foreachBatch`` with ``write_dataframe(batch, table, commit_user=...,
  commit_identifier=batch_id)`` commits each micro-batch exactly once instead.
- Read limits of stream reads (``latestOffset(start, limit)``, ``datasource.ReadLimit``; no / no /
  yes): the read option ``max-snapshots-per-trigger`` raises ``OptionError`` (Spark would not tell
  the reader where a batch starts, so the cap could not hold).
- ``types.TimeType`` (no / yes / yes): a TIME column raises ``UnsupportedTypeError``.
- ``to_arrow_schema``'s UTC timestamps (``timestamp_utc=True`` / ``timestamp_utc=True`` /
  ``timezone="UTC"``): the same Arrow schema on every version (``to_arrow_schema`` here).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyspark
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import datasource as _datasource
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas import types as _pandas_types

from lakestore import errors

MINIMUM_PYSPARK = "4.0.5"
# The versions the test suite runs lakestore's Spark path on (tests/spark/test_pyspark_versions.py).
CHECKED_PYSPARK = ("4.0.5", "4.1.4", "4.3.0")
PYSPARK_VERSION: str = pyspark.__version__


def _release(version: str) -> tuple[int, ...]:
    """``"4.1.0.dev1"`` -> ``(4, 1, 0)``: the release numbers of a version string."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    if match is None:
        return (0,)
    return tuple(int(part or 0) for part in match.groups())


if _release(PYSPARK_VERSION) < _release(MINIMUM_PYSPARK):
    raise errors.OptionError(
        f"lakestore.spark needs pyspark >= {MINIMUM_PYSPARK} (its Python Data Source API with Arrow batches);"
        f" this is pyspark {PYSPARK_VERSION}"
    )

# -- what this pyspark has ---------------------------------------------------------------------
ARROW_UDF: bool = hasattr(F, "arrow_udf")  # pyspark 4.1
FILTER_PUSHDOWN: bool = hasattr(_datasource, "Filter")  # pyspark 4.1
STREAM_ARROW_WRITER: bool = hasattr(_datasource, "DataSourceStreamArrowWriter")  # pyspark 4.1
READ_LIMITS: bool = hasattr(_datasource, "ReadLimit")  # pyspark 4.3 (admission control of stream reads)
TIME_TYPE: bool = hasattr(T, "TimeType")  # pyspark 4.1
_TIMEZONE_PARAMETER = "timezone" in inspect.signature(_pandas_types.to_arrow_schema).parameters  # 4.3; 4.0/4.1: timestamp_utc

# Spark's session setting that lets Python data sources take pushed filters (pyspark 4.1).
FILTER_PUSHDOWN_SETTING = "spark.sql.python.filterPushdown.enabled"

if TYPE_CHECKING:
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as StreamArrowWriter
else:
    # The base of lakestore's stream writer; on pyspark 4.0 the row-based one, which
    # ``require_stream_writer`` keeps from ever being used.
    StreamArrowWriter = getattr(_datasource, "DataSourceStreamArrowWriter", _datasource.DataSourceStreamWriter)


def unsupported(feature: str, since: str, instead: str = "") -> errors.OptionError:
    """The error for ``feature``, which needs pyspark >= ``since``, naming this pyspark's version."""
    detail = f": {instead}" if instead else ""
    return errors.OptionError(f"{feature} needs pyspark >= {since}; this is pyspark {PYSPARK_VERSION}{detail}")


# -- Arrow schemas ------------------------------------------------------------------------------
def to_arrow_schema(schema: T.StructType) -> pa.Schema:
    """The Arrow schema Spark uses for ``schema``, TimestampType as ``timestamp[us, tz=UTC]``
    (TimestampNTZType as ``timestamp[us]``), on every version."""
    if _TIMEZONE_PARAMETER:
        return _pandas_types.to_arrow_schema(schema, timezone="UTC")
    return _pandas_types.to_arrow_schema(schema, timestamp_utc=True)  # type: ignore[call-arg]


def time_type(precision: int) -> T.DataType:
    """Spark's TIME type of ``precision`` (0-6).

    Raises:
        UnsupportedTypeError: pyspark 4.0, which has no time type.
    """
    if not TIME_TYPE:
        raise errors.UnsupportedTypeError(f"TIME columns need pyspark >= 4.1 (Spark's TimeType); this is pyspark {PYSPARK_VERSION}")
    return T.TimeType(precision)


# -- Arrow functions over columns -------------------------------------------------------------------
ArrowFunction = Callable[..., pa.Array]


def arrow_udf(function: ArrowFunction, return_type: T.DataType) -> Callable[..., Column]:
    """``function`` (Arrow arrays in, one Arrow array out) as a Spark column function.

    Raises:
        OptionError: pyspark 4.0, which has no Arrow UDFs.
    """
    if not ARROW_UDF:
        raise unsupported("an Arrow UDF (pyspark.sql.functions.arrow_udf)", "4.1", "use lakestore.spark.distribute, which adds the bucket")
    return F.arrow_udf(function, return_type)  # type: ignore[call-overload]


def with_arrow_column(df: DataFrame, name: str, function: ArrowFunction, columns: Sequence[str], return_type: T.DataType) -> DataFrame:
    """``df`` plus (or with a new) column ``name`` = ``function(*columns)``, computed on Arrow
    arrays, never per row: an Arrow UDF, which sends only ``columns`` to Python, or on pyspark
    4.0 one ``mapInArrow`` pass over the whole rows (``function``'s array must then have the
    Arrow type Spark gives ``return_type``)."""
    if ARROW_UDF:
        return df.withColumn(name, arrow_udf(function, return_type)(*[F.col(c) for c in columns]))
    kept = [c for c in df.columns if c != name]
    rows = df.select(*[F.col(c) for c in kept]) if len(kept) != len(df.columns) else df
    schema = T.StructType([*rows.schema.fields, T.StructField(name, return_type, nullable=True)])
    wanted = list(columns)

    def add(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            values = function(*[batch.column(c) for c in wanted])
            yield pa.RecordBatch.from_arrays([*batch.columns, values], names=[*batch.schema.names, name])

    return rows.mapInArrow(add, schema)


# -- filter pushdown ------------------------------------------------------------------------------
def set_filter_pushdown(spark: SparkSession, enabled: bool) -> None:
    """Turn Spark's filter pushdown into Python data sources on or off in ``spark``.

    Raises:
        OptionError: ``enabled`` on pyspark 4.0, which pushes no filters into Python data sources.
    """
    if not FILTER_PUSHDOWN:
        if enabled:
            raise unsupported(
                "filter pushdown into the paimon source (register(spark, filter_pushdown=True))",
                "4.1",
                "register(spark) lets Spark apply a query's filters itself; read_dataframe(filter=...) prunes files on every version",
            )
        return
    spark.conf.set(FILTER_PUSHDOWN_SETTING, "true" if enabled else "false")


# -- streaming ------------------------------------------------------------------------------------
def require_stream_writer() -> None:
    """Raises:
    OptionError: pyspark 4.0, whose stream writers take rows one by one."""
    if not STREAM_ARROW_WRITER:
        raise unsupported(
            "writeStream.format('paimon') (an Arrow stream writer)",
            "4.1",
            "use foreachBatch with lakestore.spark.write_dataframe(batch, table, commit_user=<the query's>, commit_identifier=batch_id),"
            " which commits each micro-batch exactly once",
        )


def require_read_limits(option: str) -> None:
    """Raises:
    OptionError: a pyspark whose stream reads take no read limits (4.0, 4.1), for ``option``."""
    if not READ_LIMITS:
        raise unsupported(f"the stream read option {option} (read limits of Python stream readers)", "4.3")
