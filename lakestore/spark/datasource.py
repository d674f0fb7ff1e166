"""The ``paimon`` data source class, its registration, and the Python helpers built on it.

``write_dataframe``/``read_dataframe`` are the same data source used with a ``Table`` object in
hand; ``distribute`` gives a fixed-bucket table's rows one task per bucket (the bucket hash runs
in an Arrow UDF over the bucket-key columns only, so the other columns never cross to Python
before the write).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, DataSourceStreamWriter
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.format.bucket import compute_buckets
from lakestore.meta.kinds import CommitKind
from lakestore.meta.partitions import check_partition_spec
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.read.predicate import Predicate
from lakestore.spark.source import (
    BUCKET_COLUMN,
    FILTER_OPTION,
    SOURCE_NAME,
    PaimonReader,
    PaimonWriter,
    _columns_option,
    _read_snapshot,
    encode_filter,
    open_table,
    table_options,
    typed_errors,
)
from lakestore.spark.stream import ROW_KIND, PaimonStreamReader, PaimonStreamWriter, changelog_requested
from lakestore.spark.types import spark_schema
from lakestore.table import Table
from lakestore.write.input import conform

FILTER_PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


class PaimonDataSource(DataSource):
    """``spark.read/readStream/write/writeStream.format("paimon")`` over lakestore tables."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        table = open_table(self.options)
        schema = spark_schema(table.schema_at(_read_snapshot(table, self.options)), _columns_option(self.options, table))
        if changelog_requested(self.options):
            schema = schema.add(T.StructField(ROW_KIND, T.StringType(), nullable=False))
        return schema

    def reader(self, schema: StructType) -> DataSourceReader:
        return PaimonReader(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> PaimonWriter:
        return PaimonWriter(self.options, overwrite)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802 - Spark's name
        return PaimonStreamReader(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802 - Spark's name
        return PaimonStreamWriter(self.options, overwrite)


def register(spark: SparkSession) -> None:
    """Make ``format("paimon")`` available in this session (idempotent). Also turns on Spark's
    filter pushdown into Python data sources, which the source's reader needs (a session setting)."""
    spark.conf.set(FILTER_PUSHDOWN, "true")
    spark.dataSource.register(PaimonDataSource)


def bucket_column(table: Table) -> Column:
    """A Spark column with each row's bucket in ``table`` (fixed-bucket tables), from the bucket keys only."""
    schema = table.schema
    buckets = schema.core_options().bucket
    keys = list(schema.bucket_keys)
    types = schema.types_of(keys)
    arrow_types = [schema.arrow_schema().field(k).type for k in keys]

    def assign(*columns: pa.Array) -> pa.Array:
        # Buckets hash the table's binary row layout: hash values cast to the table's types.
        cast = [c.cast(t) for c, t in zip(columns, arrow_types, strict=True)]
        return pa.array(compute_buckets(types, cast, buckets), type=pa.int32())

    udf = F.arrow_udf(assign, T.IntegerType())  # type: ignore[call-overload]
    return udf(*[F.col(k) for k in keys])


def distribute(df: DataFrame, table: Table) -> DataFrame:
    """``df`` repartitioned so each (partition, bucket) of ``table`` is in one Spark partition
    (unchanged for bucket-unaware tables, where any task may write anywhere)."""
    if table.schema.core_options().bucket <= 0:
        return df
    keys = [F.col(k) for k in table.partition_keys]
    return df.withColumn(BUCKET_COLUMN, bucket_column(table)).repartition(*keys, F.col(BUCKET_COLUMN))


def _check_schema(df: DataFrame, table: Table) -> None:
    """Reject missing/extra columns and impossible casts on the driver, with lakestore's errors
    (value-dependent problems, e.g. a null key or an overflowing cast, surface from the tasks)."""
    conform(to_arrow_schema(df.schema, timezone="UTC").empty_table(), table.schema)


def write_dataframe(
    df: DataFrame, table: Table, *, overwrite: Overwrite = None, commit_user: str | None = None, commit_identifier: int | None = None
) -> Snapshot | None:
    """Write ``df`` into ``table`` in one commit (``distribute`` + ``write.format("paimon")``);
    returns the table's latest snapshot after the write, None when nothing was written.

    ``overwrite=True`` replaces the table, ``overwrite={"dt": "x"}`` one partition. A rerun with
    the same ``commit_user`` and ``commit_identifier`` finds the landed commit and writes nothing.
    Rows of one key reach their bucket's task in shuffle order: give the table a
    ``sequence.field`` if such duplicates must resolve deterministically.
    """
    _check_schema(df, table)
    if overwrite is False:
        overwrite = None
    options = table_options(table)
    if isinstance(overwrite, dict):
        check_partition_spec(table.partition_keys, overwrite, what="overwrite")
        options["overwrite-partition"] = ",".join(f"{k}={v}" for k, v in overwrite.items())
    options["commit-user"] = commit_user or str(uuid.uuid4())
    if commit_identifier is not None and commit_identifier != BATCH_COMMIT_IDENTIFIER:
        options["commit-identifier"] = str(commit_identifier)
    before = table.snapshot_manager.latest_id()
    register(df.sparkSession)
    with typed_errors():
        distribute(df, table).write.format(SOURCE_NAME).mode("append" if overwrite is None else "overwrite").options(**options).save()
    kind: CommitKind = "APPEND" if overwrite is None else "OVERWRITE"
    identifier = BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier
    return table.snapshot_manager.find_committed(options["commit-user"], identifier, kind, after_id=None if commit_identifier else before)


def read_dataframe(
    spark: SparkSession,
    table: Table,
    *,
    columns: Sequence[str] | None = None,
    filter: Predicate | None = None,  # noqa: A002
    snapshot_id: int | None = None,
    max_tasks: int | None = None,
) -> DataFrame:
    """The table's rows (at ``snapshot_id``, default latest) as a Spark DataFrame, through
    ``read.format("paimon")``; ``filter`` (a lakestore predicate) prunes splits and files on the
    driver and is applied exactly on the executors."""
    options = table_options(table)
    if columns is not None:
        options["columns"] = ",".join(columns)
    if snapshot_id is not None:
        options["snapshot-id"] = str(snapshot_id)
    options["max-partitions"] = str(max_tasks or 4 * spark.sparkContext.defaultParallelism)
    if filter is not None:
        unknown = [c for c in filter.columns() if c not in table.schema.field_names]
        if unknown:
            raise errors.SchemaMismatchError(f"unknown columns {sorted(unknown)} (columns: {table.schema.field_names})")
        options[FILTER_OPTION] = encode_filter(filter)
    register(spark)
    return spark.read.format(SOURCE_NAME).options(**options).load()
