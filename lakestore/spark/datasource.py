"""The ``paimon`` data source class, its registration, and the Python helpers built on it.

``write_dataframe``/``read_dataframe`` are the same data source used with a ``Table`` object in
hand; ``distribute`` gives a fixed-bucket table's rows one task per bucket (the bucket hash runs
in an Arrow UDF over the bucket-key columns only, so the other columns never cross to Python
before the write).
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Sequence

import numpy as np
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
from lakestore.spark import bucket_sql
from lakestore.spark.source import (
    BUCKET_COLUMN,
    FILTER_OPTION,
    SOURCE_NAME,
    PaimonFilteringReader,
    PaimonReader,
    PaimonWriter,
    _columns_option,
    _read_snapshot,
    encode_filter,
    needs_single_writer,
    open_table,
    table_options,
    typed_errors,
)
from lakestore.spark.stream import ROW_KIND, PaimonStreamReader, PaimonStreamWriter, changelog_requested
from lakestore.spark.system import SystemTableReader, open_system_table, refuse_write, system_schema
from lakestore.spark.types import spark_schema, spark_type
from lakestore.table import Table
from lakestore.write.input import conform

FILTER_PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
# Session setting naming the lakestore source class registered as "paimon" in the session (the
# data source registry is per session, as settings are).
REGISTERED = "spark.lakestore.datasource"


class PaimonDataSource(DataSource):
    """``spark.read/readStream/write/writeStream.format("paimon")`` over lakestore tables."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        system = open_system_table(self.options)  # "db.t$files": Paimon's system tables
        if system is not None:
            return system_schema(system)
        table = open_table(self.options)
        schema = spark_schema(table.schema_at(_read_snapshot(table, self.options)), _columns_option(self.options, table))
        if changelog_requested(self.options):
            schema = schema.add(T.StructField(ROW_KIND, T.StringType(), nullable=False))
        return schema

    def reader(self, schema: StructType) -> DataSourceReader:
        if open_system_table(self.options) is not None:
            return SystemTableReader(self.options, schema)
        return PaimonReader(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> PaimonWriter:
        system = open_system_table(self.options)
        if system is not None:
            raise refuse_write(system)
        return PaimonWriter(self.options, overwrite)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802 - Spark's name
        return PaimonStreamReader(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802 - Spark's name
        return PaimonStreamWriter(self.options, overwrite)


class PaimonPushdownDataSource(PaimonDataSource):
    """``format("paimon")`` whose reader takes Spark's pushed filters (see ``register``)."""

    def reader(self, schema: StructType) -> DataSourceReader:
        if open_system_table(self.options) is not None:
            return SystemTableReader(self.options, schema)
        return PaimonFilteringReader(self.options, schema)


def default_parallelism(spark: SparkSession) -> int:
    """The session's default parallelism; a Spark Connect client has no SparkContext to ask, so
    there it is ``spark.default.parallelism`` if set, else ``spark.sql.shuffle.partitions``."""
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return int(spark.conf.get("spark.default.parallelism", None) or spark.conf.get("spark.sql.shuffle.partitions") or 200)
    return int(spark.sparkContext.defaultParallelism)


def register(spark: SparkSession, *, filter_pushdown: bool = False) -> None:
    """Make ``format("paimon")`` available in this session (idempotent: a session that has this
    variant registered already is left as it is, so Spark does not log a replaced data source).

    ``filter_pushdown`` turns on Spark's filter pushdown into Python data sources (a session
    setting), which prunes partitions, buckets and files by a query's filters. It is off by
    default: Spark 4.3 keeps the read planned for one query's pushed filters on the relation, so a
    DataFrame queried again without filters (``df.count()`` after ``df.where(...).count()``)
    would return the filtered rows. Without it Spark applies every filter itself (exact, with no
    pruning); ``read_dataframe(filter=...)`` prunes safely, the filter being part of the relation."""
    source = PaimonPushdownDataSource if filter_pushdown else PaimonDataSource
    spark.conf.set(FILTER_PUSHDOWN, "true" if filter_pushdown else "false")
    if spark.conf.get(REGISTERED, None) == source.__name__:
        return
    spark.dataSource.register(source)
    spark.conf.set(REGISTERED, source.__name__)


def ensure_registered(spark: SparkSession) -> None:
    """``register(spark)`` unless this session has one of lakestore's ``paimon`` sources already
    (whichever ``filter_pushdown`` the user chose stays)."""
    if spark.conf.get(REGISTERED, None) is None:
        register(spark)


def bucket_column(table: Table) -> Column:
    """A Spark column with each row's bucket in ``table`` (fixed-bucket tables), from the bucket keys only."""
    schema = table.schema
    buckets = schema.core_options().bucket
    keys = list(schema.bucket_keys)
    types = schema.types_of(keys)
    arrow_types = [schema.arrow_schema().field(k).type for k in keys]
    function = schema.core_options().get("bucket-function.type")

    def assign(*columns: pa.Array) -> pa.Array:
        # Buckets hash the table's binary row layout: hash values cast to the table's types.
        cast = [c.cast(t) for c, t in zip(columns, arrow_types, strict=True)]
        return pa.array(compute_buckets(types, cast, buckets, function), type=pa.int32())

    udf = F.arrow_udf(assign, T.IntegerType())  # type: ignore[call-overload]
    return udf(*[F.col(k) for k in keys])


def _spark_int_hash(values: np.ndarray) -> np.ndarray:
    """Spark's ``hash()`` of INT values (Murmur3 x86 32-bit, seed 42), as signed int32."""
    mask = np.uint64(0xFFFFFFFF)

    def rotl(x: np.ndarray, r: int) -> np.ndarray:
        return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & mask

    k1 = values.astype(np.int64).astype(np.uint64) & mask
    k1 = rotl((k1 * np.uint64(0xCC9E2D51)) & mask, 15)
    k1 = (k1 * np.uint64(0x1B873593)) & mask
    h1 = rotl(np.uint64(42) ^ k1, 13)
    h1 = (h1 * np.uint64(5) + np.uint64(0xE6546B64)) & mask
    h1 ^= np.uint64(4)
    h1 ^= h1 >> np.uint64(16)
    h1 = (h1 * np.uint64(0x85EBCA6B)) & mask
    h1 ^= h1 >> np.uint64(13)
    h1 = (h1 * np.uint64(0xC2B2AE35)) & mask
    h1 ^= h1 >> np.uint64(16)
    return h1.astype(np.uint32).view(np.int32)


def slot_keys(tasks: int) -> np.ndarray:
    """For each writer slot ``s < tasks``, an INT that Spark's hash partitioning into ``tasks``
    partitions sends to partition ``s``: the slot's rows then land exactly there."""
    candidates = np.arange(64 * tasks + 1024, dtype=np.int64)
    target = np.mod(_spark_int_hash(candidates).astype(np.int64), tasks)
    keys = np.empty(tasks, dtype=np.int32)
    for slot in range(tasks):
        hits = np.flatnonzero(target == slot)
        if not len(hits):
            raise errors.OptionError(f"no hash key found for writer slot {slot} of {tasks}")
        keys[slot] = candidates[hits[0]]
    return keys


def _partition_codes(columns: Sequence[pa.Array], rows: int) -> np.ndarray:
    """A stable per-row integer of the partition values (crc32 of each distinct value, combined)."""
    codes = np.zeros(rows, dtype=np.int64)
    for column in columns:
        encoded = pa.chunked_array([column]).combine_chunks().dictionary_encode()
        uniques = np.array([zlib.crc32(repr(v).encode()) for v in encoded.dictionary.to_pylist()] + [0], dtype=np.int64)
        indices = encoded.indices.fill_null(len(uniques) - 1).to_numpy(zero_copy_only=False)
        codes = codes * 1_000_003 + uniques[indices]
    return codes


def writer_column(table: Table, tasks: int) -> Column:
    """Each row's writer slot as a Spark hash key: every (partition, bucket) of ``table`` maps to
    one slot, and the groups spread evenly over ``tasks`` slots (buckets of one partition take
    consecutive slots), from the partition and bucket keys only."""
    schema = table.schema
    buckets = schema.core_options().bucket
    part_keys = list(schema.partition_keys)
    bucket_keys = list(schema.bucket_keys)
    names = list(dict.fromkeys([*part_keys, *bucket_keys]))
    types = schema.types_of(bucket_keys)
    arrow_types = {n: schema.arrow_schema().field(n).type for n in names}
    keys = slot_keys(tasks)
    function = schema.core_options().get("bucket-function.type")

    def assign(*columns: pa.Array) -> pa.Array:
        # Buckets hash the table's binary row layout: hash values cast to the table's types.
        by_name = {n: c.cast(arrow_types[n]) for n, c in zip(names, columns, strict=True)}
        bucket = compute_buckets(types, [by_name[k] for k in bucket_keys], buckets, function).astype(np.int64)
        slot = np.mod(_partition_codes([by_name[k] for k in part_keys], len(bucket)) + bucket, tasks)
        return pa.array(keys[slot], type=pa.int32())

    udf = F.arrow_udf(assign, T.IntegerType())  # type: ignore[call-overload]
    return udf(*[F.col(n) for n in names])


def _with_writer_slots(df: DataFrame, table: Table, tasks: int) -> DataFrame:
    """``df`` plus ``BUCKET_COLUMN``, its writer slot's hash key. Keys of fixed-width types (the
    common integer keys) hash in Spark SQL expressions: no Python pass over the input."""
    schema = table.schema
    buckets = schema.core_options().bucket
    bucket_keys = list(schema.bucket_keys)
    types = schema.types_of(bucket_keys)
    if buckets > 0 and not bucket_sql.supported(types, schema.core_options().get("bucket-function.type")):
        return df.withColumn(BUCKET_COLUMN, writer_column(table, tasks))
    if buckets > 0:
        df = bucket_sql.with_bucket(df, bucket_keys, types, buckets, BUCKET_COLUMN)
        bucket = F.col(BUCKET_COLUMN).cast("bigint")
    else:  # dynamic buckets: one writer per partition, which assigns its keys' buckets
        bucket = F.lit(0).cast("bigint")
    part_keys = list(schema.partition_keys)
    # Any deterministic code of the partition values serves: Spark's hash of them as the table types them.
    part_columns = [F.col(k).cast(spark_type(t)) for k, t in zip(part_keys, schema.types_of(part_keys), strict=True)]
    code = F.hash(*part_columns).cast("bigint") if part_keys else F.lit(0).cast("bigint")
    slot = F.pmod(code + bucket, F.lit(tasks).cast("bigint"))  # a partition's buckets take consecutive slots
    keys = F.array(*[F.lit(int(k)) for k in slot_keys(tasks)])
    return df.withColumn(BUCKET_COLUMN, F.element_at(keys, (slot + 1).cast("int")))


def distribute(df: DataFrame, table: Table, *, tasks: int | None = None) -> DataFrame:
    """``df`` repartitioned into ``tasks`` (default: the session's default parallelism) so each
    (partition, bucket) of ``table`` is in one Spark partition; for dynamic-bucket tables each
    partition is in one Spark partition (its task assigns the buckets of the partition's keys);
    unchanged for bucket-unaware append tables, where any task may write anywhere. One shuffle;
    the bucket hash runs in Spark SQL for integer/date/boolean bucket keys, else in an Arrow UDF
    over the partition and bucket keys only."""
    if not needs_single_writer(table):
        return df
    tasks = max(1, tasks or default_parallelism(df.sparkSession))
    # An explicit partition count: adaptive execution keeps it (no coalescing into fewer writers).
    return _with_writer_slots(df, table, tasks).repartition(tasks, F.col(BUCKET_COLUMN))


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
    ensure_registered(df.sparkSession)
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
    # One task per core: each read task pays a Python worker round trip, and groups are balanced by rows.
    options["max-partitions"] = str(max_tasks or default_parallelism(spark))
    if filter is not None:
        unknown = [c for c in filter.columns() if c not in table.schema.field_names]
        if unknown:
            raise errors.SchemaMismatchError(f"unknown columns {sorted(unknown)} (columns: {table.schema.field_names})")
        options[FILTER_OPTION] = encode_filter(filter)
    ensure_registered(spark)
    return spark.read.format(SOURCE_NAME).options(**options).load()
