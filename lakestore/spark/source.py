"""The ``paimon`` Spark data source (PySpark's Python Data Source API): batch read and write.

```python
lakestore.spark.register(spark)
df = spark.read.format("paimon").option("warehouse", wh).load("db.t")
df.write.format("paimon").mode("append").option("warehouse", wh).save("db.t")
```

Read options: ``snapshot-id``, ``tag``, ``timestamp-millis`` (time travel), ``columns`` (a
comma-separated projection: the Python Data Source API has no column-pruning hook, so the
projection is an option). Spark's pushed filters become ``lakestore.col`` predicates that prune
splits and files on the driver and are applied exactly on the executors; each input partition
reads one group of planned splits (groups balanced by row count, ``max-partitions`` caps them;
by default one per 256k rows, at most 64).

Write options: ``overwrite-partition`` (``"dt=2024-01-01"``: with mode overwrite, replace that
partition only), ``commit-user`` + ``commit-identifier`` (a rerun whose commit landed writes
nothing), ``max-partitions``. Every task writes with ``Table.new_write`` and returns its
serialized CommitMessages; the driver commits once, and an aborted job deletes the tasks' files.
Any other option is a catalog option (``s3.endpoint``, ``lock.enabled``...).

A fixed-bucket primary-key table needs each bucket written by one task (sequence numbers of a
bucket come from one writer): ``distribute(df, table)`` repartitions by bucket, and a commit whose
tasks wrote the same bucket of such a table is refused.
"""

from __future__ import annotations

import base64
import heapq
import os
import pickle
import re
import signal
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

import lakestore
from lakestore import errors
from lakestore.commit.commit import Overwrite
from lakestore.meta.commit_message import CommitMessage
from lakestore.meta.kinds import CommitKind
from lakestore.meta.partitions import check_partition_spec
from lakestore.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from lakestore.read.predicate import Predicate
from lakestore.read.scan import Split
from lakestore.spark.types import spark_arrow_schema, to_spark_arrow
from lakestore.table import Table

SOURCE_NAME = "paimon"
BUCKET_COLUMN = "__lakestore_bucket"
FILE_IO_OPTION = "lakestore.file-io"
FILTER_OPTION = "lakestore.filter"
_BATCH_ROWS = 65536
_ROWS_PER_PARTITION = 262_144
# Options that configure the source itself; every other option goes to the catalog.
_SOURCE_OPTIONS = frozenset(
    {
        "path",
        "warehouse",
        "snapshot-id",
        "tag",
        "timestamp-millis",
        "columns",
        "max-partitions",
        "overwrite-partition",
        "commit-user",
        "commit-identifier",
        "start",
        "consumer-id",
        "max-snapshots-per-trigger",
        "read.changelog",
        FILE_IO_OPTION,
        FILTER_OPTION,
    }
)


# Test-only fault injection: "<point>:<marker file>[:executor]" (comma-separated for several) in
# the Python workers' environment makes the first task reaching <point> crash: its Python worker
# exits, or with ":executor" its executor JVM is killed first (on a cluster). The marker file makes
# it happen once per marker and lists the files the crashed attempt had written.
FAULT_ENV = "LAKESTORE_SPARK_FAULT"


def _executor_jvm() -> int | None:
    """The pid of the executor JVM this Python worker runs under (None: not on an executor)."""
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        if b"CoarseGrainedExecutorBackend" in cmdline:
            return pid
        pid = parent
    return None


def maybe_fail(point: str, files: Sequence[str] = ()) -> None:
    for spec in filter(None, os.environ.get(FAULT_ENV, "").split(",")):
        wanted, _, rest = spec.partition(":")
        marker, _, action = rest.partition(":")
        if wanted != point:
            continue
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            continue
        os.write(fd, "".join(f"{f}\n" for f in files).encode())
        os.close(fd)
        executor = _executor_jvm() if action == "executor" else None
        if executor is not None:
            os.kill(executor, signal.SIGKILL)
        os._exit(17)  # a crash, not an exception: no cleanup code runs, like a killed executor


_EXECUTOR_ERROR = re.compile(r"lakestore\.errors\.(\w+): ([^\n]*)")


@contextmanager
def typed_errors() -> Iterator[None]:
    """A lakestore error raised on an executor reaches the driver wrapped in Spark's exception:
    re-raise it as the same typed error (the Spark exception stays its cause)."""
    try:
        yield
    except errors.LakestoreError:
        raise
    except Exception as exc:
        match = _EXECUTOR_ERROR.search(str(exc))
        error_type = getattr(errors, match.group(1), None) if match else None
        if match is not None and isinstance(error_type, type) and issubclass(error_type, errors.LakestoreError):
            if error_type is errors.CorruptMetadataError:
                raise errors.CorruptMetadataError("<executor>", match.group(2)) from exc
            raise error_type(match.group(2)) from exc
        raise


def open_table(options: Mapping[str, str]) -> Table:
    """The table named by the ``path`` option: ``db.t`` in the ``warehouse`` option's catalog, or
    a table directory (``s3://bucket/wh/db.db/t``) when no warehouse is given."""
    warehouse, identifier = options.get("warehouse"), options.get("path")
    if not identifier:
        raise errors.OptionError("the paimon source needs a table name in load()/save() (and .option('warehouse', ...))")
    catalog_options = {k: str(v) for k, v in options.items() if k not in _SOURCE_OPTIONS}
    file_io = options.get(FILE_IO_OPTION)
    if file_io:  # set by the Python helpers, which hold a Table (and its FileIO) already
        return Table.from_path(str(identifier), file_io=pickle.loads(base64.b64decode(str(file_io))))  # noqa: S301 - our own option
    if not warehouse:
        return Table.from_path(str(identifier), options=catalog_options)
    return lakestore.Catalog(str(warehouse), options=catalog_options).get_table(str(identifier))


def table_options(table: Table) -> dict[str, str]:
    """Source options naming ``table`` itself (its directory and FileIO, credentials included)."""
    return {"path": table.path, FILE_IO_OPTION: base64.b64encode(pickle.dumps(table.file_io)).decode()}


def encode_filter(predicate: Predicate) -> str:
    """A lakestore predicate as an option value (the Python helpers pass theirs this way)."""
    return base64.b64encode(pickle.dumps(predicate)).decode()


def _int_option(options: Mapping[str, str], key: str) -> int | None:
    value = options.get(key)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise errors.OptionError(f"option {key!r} must be an integer, got {value!r}") from exc


def _columns_option(options: Mapping[str, str], table: Table) -> list[str] | None:
    value = options.get("columns")
    if not value:
        return None
    columns = [c.strip() for c in str(value).split(",") if c.strip()]
    unknown = [c for c in columns if c not in table.schema.field_names]
    if unknown:
        raise errors.SchemaMismatchError(f"unknown columns {unknown} (columns: {table.schema.field_names})")
    return columns


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


# -- filter pushdown ------------------------------------------------------------------------------
# Only scalar literals of types whose Arrow comparison matches Spark's are pushed (timestamps and
# decimals stay in Spark: their Python values compare under different time zone/scale rules).
_PUSHABLE_VALUES = (bool, int, float, str, date)


def _pushable_value(value: Any) -> bool:
    return value is not None and type(value) in _PUSHABLE_VALUES


def to_predicate(spark_filter: Filter, pushable_columns: set[str]) -> Predicate | None:
    """The lakestore predicate of one Spark filter, or None if it is not pushed."""
    attribute = getattr(spark_filter, "attribute", None)
    if isinstance(spark_filter, Not):
        inner = spark_filter.child
        if isinstance(inner, EqualTo):
            pred = to_predicate(inner, pushable_columns)
            return None if pred is None else ~pred
        return None
    if attribute is None or len(attribute) != 1 or attribute[0] not in pushable_columns:
        return None
    column = lakestore.col(attribute[0])
    if isinstance(spark_filter, IsNull):
        return column.is_null()
    if isinstance(spark_filter, IsNotNull):
        return column.is_not_null()
    if isinstance(spark_filter, In):
        values = list(spark_filter.value)
        return column.isin(values) if values and all(_pushable_value(v) for v in values) else None
    value = getattr(spark_filter, "value", None)
    if not _pushable_value(value):
        return None
    if isinstance(spark_filter, EqualTo):
        return column == value
    if isinstance(spark_filter, GreaterThan):
        return column > value
    if isinstance(spark_filter, GreaterThanOrEqual):
        return column >= value
    if isinstance(spark_filter, LessThan):
        return column < value
    if isinstance(spark_filter, LessThanOrEqual):
        return column <= value
    return None


_PUSHABLE_TYPES = frozenset({"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "CHAR", "VARCHAR", "DATE"})


# -- read -----------------------------------------------------------------------------------------
class PaimonReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.options = dict(options)
        self.names = [f.name for f in schema.fields]
        encoded = self.options.get(FILTER_OPTION)
        self.filter: Predicate | None = pickle.loads(base64.b64decode(str(encoded))) if encoded else None  # noqa: S301 - our own option

    def partitions(self) -> Sequence[InputPartition]:
        table = open_table(self.options)
        splits = table.plan(
            filter=self.filter,
            snapshot_id=_int_option(self.options, "snapshot-id"),
            tag=self.options.get("tag"),
            timestamp_ms=_int_option(self.options, "timestamp-millis"),
        )
        # Each input partition costs a Python task: without a cap, groups of at least
        # _ROWS_PER_PARTITION rows (up to 64 partitions) keep small tables from fanning out.
        cap = _int_option(self.options, "max-partitions") or min(64, 1 + sum(s.row_count for s in splits) // _ROWS_PER_PARTITION)
        return [InputPartition(group) for group in group_splits(splits, cap)] or [InputPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        table = open_table(self.options)
        schema = table.schema_at(_read_snapshot(table, self.options))
        reader = table.split_reader(schema)
        target = spark_arrow_schema(schema, self.names)
        for split in partition.value:
            data = to_spark_arrow(reader.read(split, self.names, self.filter), target)
            yield from data.to_batches(max_chunksize=_BATCH_ROWS)


class PaimonFilteringReader(PaimonReader):
    """The reader with Spark's filter pushdown (``register(spark, filter_pushdown=True)``):
    PySpark refuses a reader that has ``pushFilters`` while the session's pushdown is off."""

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 - Spark's name
        table = open_table(self.options)
        pushable = {f.name for f in table.schema.fields if f.type.root in _PUSHABLE_TYPES}
        for spark_filter in filters:
            pred = to_predicate(spark_filter, pushable)
            if pred is None:
                yield spark_filter
            else:
                self.filter = pred if self.filter is None else self.filter & pred


def _read_snapshot(table: Table, options: Mapping[str, str]) -> Snapshot | None:
    snapshot_id, tag, timestamp = _int_option(options, "snapshot-id"), options.get("tag"), _int_option(options, "timestamp-millis")
    if snapshot_id is None and tag is None and timestamp is None:
        return None
    return table.resolve_snapshot(snapshot_id, tag, timestamp)


# -- write ----------------------------------------------------------------------------------------
@dataclass
class PaimonCommitMessage(WriterCommitMessage):
    """What one task sends the driver: its serialized lakestore CommitMessages."""

    messages: list[bytes]


def parse_partition_spec(table: Table, spec: str) -> dict[str, Any]:
    """``"dt=2024-01-01,h=3"`` -> ``{"dt": "2024-01-01", "h": 3}`` (values cast to the keys' types)."""
    out: dict[str, Any] = {}
    fields = {f.name: f for f in table.arrow_schema}
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise errors.OptionError(f"overwrite-partition {spec!r}: expected key=value pairs of partition keys {table.partition_keys}")
        out[key] = pa.array([value.strip()]).cast(fields[key].type)[0].as_py() if key in fields else value
    check_partition_spec(table.partition_keys, out, what="overwrite")
    return out


def write_overwrite(table: Table, options: Mapping[str, str], overwrite: bool) -> Overwrite:
    spec = options.get("overwrite-partition")
    if not overwrite:
        if spec:
            raise errors.OptionError("overwrite-partition needs mode('overwrite')")
        return None
    return parse_partition_spec(table, str(spec)) if spec else True


def write_task(table: Table, batches: Iterator[pa.RecordBatch], commit_user: str, overwrite: Overwrite) -> PaimonCommitMessage:
    """One task's write: its batches through a TableWrite, its files deleted if it fails."""
    writer = None
    try:
        for batch in batches:
            if not batch.num_rows:
                continue
            if writer is None:  # lazily: an empty task need not index the table's files
                writer = table.new_write(commit_user=commit_user, overwrite=overwrite)
            index = batch.schema.get_field_index(BUCKET_COLUMN)
            writer.write_arrow(batch.remove_column(index) if index >= 0 else batch)
        messages = writer.prepare_commit() if writer is not None else []
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if writer is not None:
        writer.close()
    maybe_fail("after-write", [f.file_name for m in messages for f in (*m.new_files, *m.changelog_files)])
    return PaimonCommitMessage([m.to_bytes() for m in messages if not m.is_empty])


def task_messages(messages: Sequence[WriterCommitMessage | None]) -> list[list[CommitMessage]]:
    return [[CommitMessage.from_bytes(b) for b in m.messages] for m in messages if isinstance(m, PaimonCommitMessage)]


def needs_single_writer(table: Table) -> bool:
    """Whether each bucket must be written by one task: fixed-bucket primary-key tables (a bucket's
    sequence numbers come from one writer) and dynamic-bucket tables (a partition's keys are
    assigned buckets by one writer, or two tasks could put one key in two buckets)."""
    buckets = table.schema.core_options().bucket
    return bool(table.primary_keys) or buckets > 0


def check_single_writer(table: Table, per_task: list[list[CommitMessage]]) -> None:
    """Refuse a primary-key commit whose tasks wrote the same bucket."""
    if not table.primary_keys:
        return
    owner: dict[tuple[bytes, int], int] = {}
    for task, messages in enumerate(per_task):
        for m in messages:
            if m.new_files and owner.setdefault((m.partition, m.bucket), task) != task:
                raise errors.OptionError(
                    f"two Spark tasks wrote bucket {m.bucket} of primary-key table {table.identifier}: distribute the rows by"
                    " bucket first (lakestore.spark.distribute(df, table), or lakestore.spark.write_dataframe)"
                )


def commit_once(
    table: Table, messages: list[CommitMessage], *, commit_user: str, commit_identifier: int, kind: CommitKind, overwrite: Overwrite
) -> list[Snapshot]:
    """One commit on the driver; files are deleted only if the commit provably did not land."""
    start = table.snapshot_manager.latest_id()
    commit = table.new_commit(commit_user=commit_user)
    try:
        return commit.commit(messages, commit_identifier, overwrite=overwrite)
    except BaseException:
        if table.snapshot_manager.find_committed(commit_user, commit_identifier, kind, after_id=start) is None:
            commit.abort(messages)
        raise


def abort_tasks(table: Table, commit_user: str, messages: Sequence[WriterCommitMessage | None]) -> None:
    written = [m for task in task_messages(messages) for m in task]
    if written:
        table.new_commit(commit_user=commit_user).abort(written)


class PaimonWriter(DataSourceArrowWriter):
    def __init__(self, options: Mapping[str, str], overwrite: bool) -> None:
        self.options = dict(options)
        table = open_table(self.options)
        self.overwrite = write_overwrite(table, self.options, overwrite)
        self.commit_user = str(self.options.get("commit-user") or uuid.uuid4())
        identifier = _int_option(self.options, "commit-identifier")
        self.commit_identifier = BATCH_COMMIT_IDENTIFIER if identifier is None else identifier
        self.kind: CommitKind = "APPEND" if self.overwrite is None else "OVERWRITE"
        # A rerun of a job whose commit landed: tasks write nothing, the driver commits nothing.
        self.landed = identifier is not None and table.snapshot_manager.find_committed(
            self.commit_user, identifier, self.kind, after_id=None
        )
        self.snapshots: list[Snapshot] = []
        self.start = table.snapshot_manager.latest_id()  # this job's commit lands after it

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        if self.landed:
            return PaimonCommitMessage([])
        return write_task(open_table(self.options), iterator, self.commit_user, self.overwrite)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        if self.landed:
            return
        table = open_table(self.options)
        per_task = task_messages(messages)
        try:
            check_single_writer(table, per_task)
        except errors.LakestoreError:
            abort_tasks(table, self.commit_user, messages)
            raise
        flat = [m for task in per_task for m in task]
        if not flat and self.overwrite is None:
            return
        commit_once(
            table, flat, commit_user=self.commit_user, commit_identifier=self.commit_identifier, kind=self.kind, overwrite=self.overwrite
        )
        maybe_fail("after-commit")

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        if self.landed:
            return
        table = open_table(self.options)
        # Spark aborts a job whose commit step failed even when the commit landed first (the
        # worker died after it): the files are the table's then, and must stay.
        if table.snapshot_manager.find_committed(self.commit_user, self.commit_identifier, self.kind, after_id=self.start) is None:
            abort_tasks(table, self.commit_user, messages)
