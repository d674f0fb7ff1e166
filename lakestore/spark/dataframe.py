"""The DataFrame helpers over the ``paimon`` source: ``write_dataframe`` and ``read_dataframe``
use it with a ``Table`` in hand (passing the table's reference, the typed overwrite and scan as
JSON documents, ``lakestore.spark.job``, not their string forms), and ``distribute`` gives a
table's rows one Spark partition per (partition, bucket) writer slot (the bucket hash runs in
Spark SQL for fixed-width keys, else in an Arrow UDF over the partition and bucket keys only, so
the other columns never cross to Python before the write; pyspark 4.0 has no Arrow UDFs, and there
one ``mapInArrow`` pass adds the slot: ``lakestore.spark.compat``).

Credentials never go into the DataFrame's options: Spark's processes read them from their
environment (``AWS_*``, ``PGPASSWORD``, ``LAKESTORE_REST_TOKEN``; ``spark.executorEnv.*`` on a
cluster). A table whose catalog options hold a credential that neither this process's
environment nor the session's executor environment holds is refused with ``OptionError``
(``lakestore.spark.job.table_ref``).
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.commit.protocol import CommitId, commit_kind, find_landed
from lakestore.format.bucket import compute_buckets
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.read.predicate import Predicate
from lakestore.scan import scan_spec
from lakestore.spark import bucket_sql, compat
from lakestore.spark.options import (
    BUCKET_COLUMN,
    COMMIT_IDENTIFIER,
    COMMIT_USER,
    MAX_PARTITIONS,
    SOURCE_NAME,
    overwrite_option,
    scan_option,
    table_options,
    typed_errors,
)
from lakestore.spark.source import ensure_registered
from lakestore.spark.tasks import needs_single_writer
from lakestore.spark.types import spark_type
from lakestore.table import Table
from lakestore.write.input import conform


def executor_environments(spark: SparkSession) -> list[Mapping[str, str]]:
    """The environment the session gives its Python workers beyond the driver's own
    (``spark.executorEnv.*``); a Spark Connect client has none to ask."""
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return []
    return [dict(spark.sparkContext.environment)]


def default_parallelism(spark: SparkSession) -> int:
    """The session's default parallelism; a Spark Connect client has no SparkContext to ask, so
    there it is ``spark.default.parallelism`` if set, else ``spark.sql.shuffle.partitions``."""
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return int(spark.conf.get("spark.default.parallelism", None) or spark.conf.get("spark.sql.shuffle.partitions") or 200)
    return int(spark.sparkContext.defaultParallelism)


def bucket_column(table: Table) -> Column:
    """A Spark column with each row's bucket in ``table`` (fixed-bucket tables), from the bucket keys only.

    Raises:
        OptionError: pyspark 4.0, which has no Arrow UDFs (``distribute`` adds the bucket there).
    """
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

    return compat.arrow_udf(assign, T.IntegerType())(*[F.col(k) for k in keys])


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


def with_writer_column(df: DataFrame, table: Table, tasks: int) -> DataFrame:
    """``df`` plus ``BUCKET_COLUMN``, each row's writer slot as a Spark hash key: every
    (partition, bucket) of ``table`` maps to one slot, and the groups spread evenly over ``tasks``
    slots (buckets of one partition take consecutive slots), computed on Arrow arrays of the
    partition and bucket keys (``compat.with_arrow_column``)."""
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

    return compat.with_arrow_column(df, BUCKET_COLUMN, assign, names, T.IntegerType())


def _with_writer_slots(df: DataFrame, table: Table, tasks: int) -> DataFrame:
    """``df`` plus ``BUCKET_COLUMN``, its writer slot's hash key. Keys of fixed-width types (the
    common integer keys) hash in Spark SQL expressions: no Python pass over the input."""
    schema = table.schema
    buckets = schema.core_options().bucket
    bucket_keys = list(schema.bucket_keys)
    types = schema.types_of(bucket_keys)
    if buckets > 0 and not bucket_sql.supported(types, schema.core_options().get("bucket-function.type")):
        return with_writer_column(df, table, tasks)
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
    over the partition and bucket keys only (on pyspark 4.0, which has none, one ``mapInArrow``
    pass: ``lakestore.spark.compat``)."""
    if not needs_single_writer(table):
        return df
    tasks = max(1, tasks or default_parallelism(df.sparkSession))
    # An explicit partition count: adaptive execution keeps it (no coalescing into fewer writers).
    return _with_writer_slots(df, table, tasks).repartition(tasks, F.col(BUCKET_COLUMN))


def _check_schema(df: DataFrame, table: Table) -> None:
    """Reject missing/extra columns and impossible casts on the driver, with lakestore's errors
    (value-dependent problems, e.g. a null key or an overflowing cast, surface from the tasks)."""
    conform(compat.to_arrow_schema(df.schema).empty_table(), table.schema)


def write_dataframe(
    df: DataFrame, table: Table, *, overwrite: Overwrite = None, commit_user: str | None = None, commit_identifier: int | None = None
) -> Snapshot | None:
    """Write ``df`` into ``table`` in one commit (``distribute`` + ``write.format("paimon")``);
    returns the snapshot the commit landed as, None when nothing was written.

    ``overwrite=True`` replaces the table, ``overwrite={"dt": "x"}`` one partition (its typed
    values reach the writer as they are: any value, ``","`` and ``"="`` included). A rerun with
    the same ``commit_user`` and ``commit_identifier`` commits nothing: its commit finds the
    landed one, deletes the files the rerun's tasks wrote and returns the landed snapshot.
    Rows of one key reach their bucket's task in shuffle order: give the table a
    ``sequence.field`` if such duplicates must resolve deterministically.

    Args:
        df: the rows; columns matched by name and cast to the table's types.
        table: the table written.
        overwrite: ``True`` (the whole table) or a dict of partition values (one partition).
        commit_user: the commit user (default: a fresh UUID).
        commit_identifier: with ``commit_user``, makes the write idempotent.

    Returns:
        The APPEND or OVERWRITE snapshot of the commit, or None when nothing was committed.

    Raises:
        SchemaMismatchError: missing, unknown or mistyped columns (checked before any task runs).
        PartitionValueError: ``overwrite`` names a column that is not a partition key, or a row
            lies outside the overwritten partition.
        OptionError: two tasks wrote one bucket of a primary-key table, or the table's catalog
            options hold a credential Spark's environment lacks (see the module docstring).
        CommitConflictError: a concurrent commit conflicts with this one.
    """
    _check_schema(df, table)
    if overwrite is False:
        overwrite = None
    options = table_options(table, environments=executor_environments(df.sparkSession))
    if overwrite is not None and overwrite is not True:
        options.update(overwrite_option(table, overwrite))  # checked once here, passed typed
    commit_id = CommitId(commit_user or str(uuid.uuid4()), BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier)
    options[COMMIT_USER] = commit_id.user
    if commit_id.identifier != BATCH_COMMIT_IDENTIFIER:
        options[COMMIT_IDENTIFIER] = str(commit_id.identifier)
    before = table.store.snapshot_manager.latest_id()
    ensure_registered(df.sparkSession)
    with typed_errors():
        distribute(df, table).write.format(SOURCE_NAME).mode("append" if overwrite is None else "overwrite").options(**options).save()
    # the job's commit decided whether it landed; this looks up the snapshot to return it
    return find_landed(table, commit_id, commit_kind(overwrite), after_id=before)


def read_dataframe(
    spark: SparkSession,
    table: Table,
    *,
    columns: Sequence[str] | None = None,
    filter: Predicate | None = None,  # noqa: A002
    snapshot_id: int | None = None,
    tag: str | None = None,
    timestamp_ms: int | None = None,
    watermark: int | None = None,
    limit: int | None = None,
    max_tasks: int | None = None,
) -> DataFrame:
    """The table's rows as a Spark DataFrame, through ``read.format("paimon")`` with the scan
    (a ``lakestore.scan.ScanSpec``) passed whole: ``filter`` (a lakestore predicate) prunes
    splits and files on the driver and is applied exactly on the executors.

    Args:
        spark: the session (the ``paimon`` source is registered in it if it is not yet).
        table: the table read.
        columns: the columns, in this order (default: all).
        filter: a lakestore predicate (``lakestore.col("dt") == "2024-01-01"``).
        snapshot_id: time travel to this snapshot (default: the latest).
        tag: time travel to this tag.
        timestamp_ms: time travel to the last snapshot committed by then (epoch millis).
        watermark: time travel to the first snapshot whose watermark reached it.
        limit: at most this many rows (the first in read order; read by one task).
        max_tasks: at most this many read tasks (default: the session's default parallelism).

    Returns:
        A DataFrame of the scan's rows; time travel reads with the snapshot's own schema.

    Raises:
        SchemaMismatchError: a selected or filtered column does not exist.
        SnapshotNotFoundError: the time-travel target does not exist.
        TagNotFoundError: the tag does not exist.
        ValueError: more than one time-travel argument, or a negative limit.
        OptionError: a filter literal with no exact JSON form, or the table's catalog options
            hold a credential Spark's environment lacks (see the module docstring).
    """
    spec = scan_spec(columns, filter=filter, snapshot_id=snapshot_id, tag=tag, timestamp_ms=timestamp_ms, watermark=watermark, limit=limit)
    # One task per core: each read task pays a Python worker round trip, and groups are balanced by rows.
    options = {
        **table_options(table, environments=executor_environments(spark)),
        **scan_option(spec),
        MAX_PARTITIONS: str(max_tasks or default_parallelism(spark)),
    }
    ensure_registered(spark)
    with typed_errors():  # the source checks the scan on the driver, in a Python worker
        return spark.read.format(SOURCE_NAME).options(**options).load()
