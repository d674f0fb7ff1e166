"""The ``paimon`` Spark data source (PySpark's Python Data Source API): batch read and write, and
its registration in a session.

```python
lakestore.spark.register(spark)
df = spark.read.format("paimon").option("warehouse", wh).load("db.t")
df.write.format("paimon").mode("append").option("warehouse", wh).save("db.t")
```

Table options: ``warehouse`` and the table name, or a table directory; ``branch`` (Paimon's
option: the branch read or written; ``"db.t$branch_<b>"`` names one too).

Read options: ``snapshot-id``, ``tag``, ``timestamp-millis`` (time travel), ``columns`` (a
comma-separated projection: the Python Data Source API has no column-pruning hook, so the
projection is an option); ``read_dataframe`` passes the same as one ``ScanSpec`` (with its filter
and limit) in JSON (``lakestore.spark.job``), and the table as a ``TableRef`` without
credentials: Spark's processes read credentials from their environment. The driver plans the
scan (``TableScan.plan``); Spark's pushed filters become ``lakestore.col`` predicates that prune
splits and files on the driver and are applied exactly on the executors; each input partition
reads one group of planned splits (groups balanced by row count, ``max-partitions`` caps them;
by default one per 256k rows, at most 64).

Write options: ``overwrite-partition`` (``"dt=2024-01-01"``: with mode overwrite, replace that
partition only; ``write_dataframe`` passes the typed partition dict instead), ``commit-user`` +
``commit-identifier`` (a rerun whose commit landed commits nothing and deletes what it wrote),
``max-partitions``. Every task runs the commit protocol's write half (``Table.new_write``) and
returns its serialized CommitMessages; the driver runs the commit half once, which decides
whether the commit landed, and an aborted job deletes the tasks' files only when the commit step
never ran (``lakestore.spark.tasks``). Each Python worker opens a job's table once
(``lakestore.spark.tasks.job_table``). ``merge_into`` adds each row's kind as a column (-D rows
of a delete) and the commit's operation (MERGE) as an option. Any other option is a catalog
option (``s3.endpoint``, ``lock.enabled``...).

A fixed-bucket primary-key table needs each bucket written by one task (sequence numbers of a
bucket come from one writer): ``distribute(df, table)`` repartitions by bucket, and a commit whose
tasks wrote the same bucket of such a table is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import types as T
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from lakestore.read.predicate import Predicate
from lakestore.scan import StoreScan, TableScan
from lakestore.spark import compat
from lakestore.spark.options import (
    MAX_PARTITIONS,
    SOURCE_NAME,
    commit_id_of,
    int_option,
    operation_of,
    overwrite_of,
    scan_of,
    scan_schema,
    table_ref_of,
    with_filter,
)
from lakestore.spark.pushdown import pushable_columns, to_predicate
from lakestore.spark.stream import ROW_KIND, PaimonStreamReader, PaimonStreamWriter, changelog_requested
from lakestore.spark.system import SystemTableReader, open_system_table, refuse_write, system_schema
from lakestore.spark.tasks import (
    PaimonCommitMessage,
    ReadTask,
    abort_tasks,
    commit_tasks,
    group_splits,
    job_table,
    new_job_id,
    read_task,
    task_hook,
    write_task,
)
from lakestore.spark.types import spark_schema

if TYPE_CHECKING:
    from pyspark.sql.datasource import Filter  # pyspark 4.1 (lakestore.spark.compat.FILTER_PUSHDOWN)

FILTER_PUSHDOWN = compat.FILTER_PUSHDOWN_SETTING
# Session setting naming the lakestore source class registered as "paimon" in the session (the
# data source registry is per session, as settings are).
REGISTERED = "spark.lakestore.datasource"
_ROWS_PER_PARTITION = 262_144


# -- read -----------------------------------------------------------------------------------------
class PaimonReader(DataSourceReader):
    """A batch read: the driver plans the options' scan into groups of splits (``partitions``),
    each input partition reads one group on an executor (``read``)."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.options = dict(options)
        self.ref = table_ref_of(self.options)  # what travels to the executors: no Table, no FileIO
        self.job = new_job_id()
        self.names = tuple(f.name for f in schema.fields)
        self.pushed: Predicate | None = None  # Spark's filters taken by pushFilters

    def partitions(self) -> Sequence[InputPartition]:
        table = job_table(self.ref, self.job)
        spec = scan_of(self.options)
        if self.pushed is not None:
            spec = with_filter(spec, self.pushed)
        schema = scan_schema(table, spec)
        splits = TableScan(StoreScan(table.store), spec).plan()
        if spec.limit is not None:
            groups = [splits]  # one task reads the first rows in read order, stopping at the limit
        else:
            # Each input partition costs a Python task: without a cap, groups of at least
            # _ROWS_PER_PARTITION rows (up to 64 partitions) keep small tables from fanning out.
            rows = sum(s.row_count for s in splits)
            groups = group_splits(splits, int_option(self.options, MAX_PARTITIONS) or min(64, 1 + rows // _ROWS_PER_PARTITION))
        tasks = [ReadTask(schema, tuple(group), self.names, spec.filter, spec.limit) for group in groups if group]
        return [InputPartition(task) for task in tasks] or [InputPartition(ReadTask(schema, (), self.names))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        task: ReadTask = partition.value
        if task.splits:
            yield from read_task(job_table(self.ref, self.job), task)


class PaimonFilteringReader(PaimonReader):
    """The reader with Spark's filter pushdown (``register(spark, filter_pushdown=True)``):
    PySpark refuses a reader that has ``pushFilters`` while the session's pushdown is off, and
    pyspark 4.0 pushes no filters (``lakestore.spark.compat``)."""

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 - Spark's name
        pushable = pushable_columns(job_table(self.ref, self.job).schema)
        for spark_filter in filters:
            pred = to_predicate(spark_filter, pushable)
            if pred is None:
                yield spark_filter
            else:
                self.pushed = pred if self.pushed is None else self.pushed & pred


# -- write ----------------------------------------------------------------------------------------
class PaimonWriter(DataSourceArrowWriter):
    """A batch write: each task writes its rows (``write_task``), the driver commits all tasks'
    messages once as the options' ``CommitId`` (``commit_tasks``, where the protocol decides
    whether it landed: a rerun of a landed ``CommitId`` commits nothing and deletes its tasks'
    files), and Spark's abort, which runs in another process and also follows a failed commit,
    deletes the tasks' files only when the commit step never ran (``abort_tasks``). What Spark
    sends the tasks and the commit is this object: the table's reference and the job's typed
    values, never a Table."""

    def __init__(self, options: Mapping[str, str], overwrite: bool) -> None:
        self.ref = table_ref_of(options)
        self.job = new_job_id()
        self.overwrite = overwrite_of(job_table(self.ref, self.job), options, overwrite)
        self.commit_id = commit_id_of(options)
        self.operation = operation_of(options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        return write_task(job_table(self.ref, self.job), iterator, self.commit_id.user, self.overwrite)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        table = job_table(self.ref, self.job)
        commit_tasks(table, messages, self.commit_id, overwrite=self.overwrite, operation=self.operation)
        task_hook("after-commit")

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        abort_tasks(job_table(self.ref, self.job), messages, self.commit_id.user)


# -- the data source ------------------------------------------------------------------------------
class PaimonDataSource(DataSource):
    """``spark.read/readStream/write/writeStream.format("paimon")`` over lakestore tables."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        system = open_system_table(self.options)  # "db.t$files": Paimon's system tables
        if system is not None:
            return system_schema(system)
        spec = scan_of(self.options)
        schema = spark_schema(scan_schema(job_table(table_ref_of(self.options), new_job_id()), spec), spec.columns)
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
        """Raises:
        OptionError: pyspark 4.0 (no Arrow stream writer: ``lakestore.spark.compat``), or a
            missing ``commit-user``."""
        compat.require_stream_writer()
        return PaimonStreamWriter(self.options, overwrite)


class PaimonPushdownDataSource(PaimonDataSource):
    """``format("paimon")`` whose reader takes Spark's pushed filters (see ``register``)."""

    def reader(self, schema: StructType) -> DataSourceReader:
        if open_system_table(self.options) is not None:
            return SystemTableReader(self.options, schema)
        return PaimonFilteringReader(self.options, schema)


def register(spark: SparkSession, *, filter_pushdown: bool = False) -> None:
    """Make ``format("paimon")`` available in this session (idempotent: a session that has this
    variant registered already is left as it is, so Spark does not log a replaced data source).

    ``filter_pushdown`` turns on Spark's filter pushdown into Python data sources (a session
    setting), which prunes partitions, buckets and files by a query's filters. It is off by
    default: Spark 4.3 keeps the read planned for one query's pushed filters on the relation, so a
    DataFrame queried again without filters (``df.count()`` after ``df.where(...).count()``)
    would return the filtered rows. Without it Spark applies every filter itself (exact, with no
    pruning); ``read_dataframe(filter=...)`` prunes safely, the filter being part of the relation.

    Raises:
        OptionError: ``filter_pushdown`` on pyspark 4.0, which pushes no filters into Python data
            sources (``lakestore.spark.compat``).
    """
    source = PaimonPushdownDataSource if filter_pushdown else PaimonDataSource
    compat.set_filter_pushdown(spark, filter_pushdown)
    if spark.conf.get(REGISTERED, None) == source.__name__:
        return
    spark.dataSource.register(source)
    spark.conf.set(REGISTERED, source.__name__)


def ensure_registered(spark: SparkSession) -> None:
    """``register(spark)`` unless this session has one of lakestore's ``paimon`` sources already
    (whichever ``filter_pushdown`` the user chose stays)."""
    if spark.conf.get(REGISTERED, None) is None:
        register(spark)
