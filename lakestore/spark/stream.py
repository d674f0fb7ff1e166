"""Structured Streaming over lakestore tables: ``readStream``/``writeStream.format("paimon")``.

Reading: offsets are snapshot ids (``{"snapshot": N}`` = changes up to snapshot N delivered), so
a query's checkpoint resumes exactly after the last micro-batch it completed. Each micro-batch
has one input partition per snapshot in its range, reading that snapshot's changes with a
``_row_kind`` column ("+I", "-U", "+U", "-D"; the option ``read.changelog=true`` is required, as
Paimon's Spark connector names it, so the row kinds are never silently dropped). Options:
``start`` ("full": the table at the first batch's snapshot as +I rows, then changes; "latest":
only new snapshots), ``snapshot-id`` (changes from that snapshot on), ``consumer-id`` (resumes
from the consumer's stored position, records it as batches complete, and protects the snapshots
it still needs from expiration), ``max-snapshots-per-trigger`` (pyspark >= 4.3, whose stream readers
take read limits; refused with ``OptionError`` before). A consumer's position is recorded when Spark confirms a batch's
offsets, which happens when it plans the next batch: a new query with the same consumer id may
see the last batch of a stopped one again (the query's checkpoint resumes exactly).

Writing: each micro-batch is one commit with the batch id as commit identifier under the
``commit-user`` option (required: it must stay the same across restarts of the query), so a
restarted query that replays a batch whose commit already landed commits nothing and deletes the
replay's files. A query opens its table once per Python worker (``job_table``): it writes with
the schema the table had when the query started, as Paimon's streaming writers do. pyspark 4.0
has no Arrow stream writer: there ``writeStream.format("paimon")`` is refused with ``OptionError``
(``lakestore.spark.compat``), and ``foreachBatch`` with ``write_dataframe(batch, table,
commit_user=..., commit_identifier=batch_id)`` commits each micro-batch exactly once instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition, WriterCommitMessage
from pyspark.sql.types import StructType

from lakestore import errors
from lakestore.commit.protocol import CommitId
from lakestore.meta.consumer import ConsumerManager
from lakestore.spark import compat
from lakestore.spark.options import (
    COMMIT_USER,
    CONSUMER_ID,
    MAX_SNAPSHOTS_PER_TRIGGER,
    READ_CHANGELOG,
    SNAPSHOT_ID,
    START,
    int_option,
    overwrite_of,
    table_ref_of,
)
from lakestore.spark.tasks import PaimonCommitMessage, abort_tasks, commit_tasks, job_table, new_job_id, write_task
from lakestore.spark.types import spark_arrow_schema, to_spark_arrow
from lakestore.table import Table

ROW_KIND = "_row_kind"
_BATCH_ROWS = 65536


def changelog_requested(options: Mapping[str, str]) -> bool:
    """Whether a stream read asks for its changes with their row kinds (``read.changelog``)."""
    return str(options.get(READ_CHANGELOG, "false")).lower() == "true"


class PaimonStreamReader(DataSourceStreamReader):
    """A stream read of a table's changes (see the module docstring).

    Raises:
        OptionError: no ``read.changelog=true``, or ``max-snapshots-per-trigger`` on a pyspark
            before 4.3 (``lakestore.spark.compat``).
    """

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        if not changelog_requested(options):
            raise errors.OptionError("readStream.format('paimon') needs .option('read.changelog', 'true') (adds the _row_kind column)")
        if int_option(options, MAX_SNAPSHOTS_PER_TRIGGER) is not None:
            compat.require_read_limits(MAX_SNAPSHOTS_PER_TRIGGER)  # before 4.3 Spark would ignore the cap
        self.options = dict(options)
        self.ref = table_ref_of(self.options)
        self.job = new_job_id()  # one per query: each process opens the table once for it
        self.names = [f.name for f in schema.fields if f.name != ROW_KIND]

    def _table(self) -> Table:
        return job_table(self.ref, self.job)

    def initialOffset(self) -> dict[str, int]:  # noqa: N802 - Spark's name
        table = self._table()
        latest = table.store.snapshot_manager.latest_id() or 0
        consumer = self.options.get(CONSUMER_ID)
        stored = ConsumerManager(table.store.file_io, table.store.metadata_path).next_snapshot(consumer) if consumer else None
        snapshot_id = int_option(self.options, SNAPSHOT_ID)
        start = str(self.options.get(START, "full"))
        if stored is not None:
            return {"snapshot": stored - 1}
        if snapshot_id is not None:
            return {"snapshot": snapshot_id - 1}
        if start == "latest":
            return {"snapshot": latest}
        if start != "full":
            raise errors.OptionError(f"start must be 'full' or 'latest', got {start!r}")
        return {"snapshot": 0, "full": 1}  # the first batch reads the whole table at its end snapshot

    def latestOffset(self, start: dict[str, int] | None = None, limit: Any = None) -> dict[str, int]:  # noqa: N802 - Spark's name
        latest = self._table().store.snapshot_manager.latest_id() or 0
        cap = int_option(self.options, MAX_SNAPSHOTS_PER_TRIGGER)
        if cap is not None and start is not None:
            latest = min(latest, start["snapshot"] + max(1, cap))
        return {"snapshot": latest}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        first, last = start["snapshot"], end["snapshot"]
        if last <= first:
            return []
        if start.get("full"):
            return [InputPartition(("full", last))]
        return [InputPartition(("changes", sid)) for sid in range(first + 1, last + 1)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        table = self._table()
        what, snapshot_id = partition.value
        if what == "full":
            rows = table.to_arrow(columns=self.names, snapshot_id=snapshot_id)
            kinds = pa.array(np.full(rows.num_rows, "+I", dtype=object), type=pa.string())
            data = rows.append_column(ROW_KIND, kinds)
        else:
            data = table.read_changes(from_snapshot_id=snapshot_id - 1, to_snapshot_id=snapshot_id, columns=self.names)
        target = pa.schema([*spark_arrow_schema(table.schema, self.names), pa.field(ROW_KIND, pa.string(), nullable=False)])
        yield from to_spark_arrow(data, target).to_batches(max_chunksize=_BATCH_ROWS)

    def commit(self, end: dict[str, int]) -> None:
        # Spark confirms a batch's offsets lazily (when it plans the next batch), so a consumer's
        # stored position may lag the last batch of a stopped query: a new query with that
        # consumer id may see that batch again; a restart from the checkpoint resumes exactly.
        consumer = self.options.get(CONSUMER_ID)
        if consumer:
            table = self._table()
            ConsumerManager(table.store.file_io, table.store.metadata_path).record(consumer, end["snapshot"] + 1)


class PaimonStreamWriter(compat.StreamArrowWriter):
    """Each micro-batch is one commit as ``CommitId(commit-user, batch id)``: its tasks write
    (``write_task``), the driver commits them (``commit_tasks``: a replayed batch whose commit
    landed commits nothing and deletes the replay's files), and Spark's abort deletes them
    unless the batch's commit landed (``abort_tasks``)."""

    def __init__(self, options: Mapping[str, str], overwrite: bool) -> None:
        self.options = dict(options)
        user = self.options.get(COMMIT_USER)
        if not user:
            raise errors.OptionError(
                "writeStream.format('paimon') needs .option('commit-user', ...), the same on every restart of the query"
                " (with the batch id it makes each micro-batch commit exactly once)"
            )
        self.commit_user = str(user)
        self.ref = table_ref_of(self.options)
        self.job = new_job_id()  # one per query: each process opens the table once for it
        self.overwrite = overwrite_of(job_table(self.ref, self.job), self.options, overwrite)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        return write_task(job_table(self.ref, self.job), iterator, self.commit_user, self.overwrite)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803 - Spark's name
        commit_tasks(job_table(self.ref, self.job), messages, CommitId(self.commit_user, batchId), overwrite=self.overwrite)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803 - Spark's name
        # After a failed commit step the batch's commit may have landed: that step decided what
        # stays (``abort_tasks``); whatever this run left unreferenced is for remove_orphan_files.
        abort_tasks(job_table(self.ref, self.job), messages, self.commit_user)
