"""Partition sync of ``metastore.partitioned-table`` and ``metastore.tag-to-partition`` tables: after each commit the Hive catalog
adds the partitions the commit created to the metastore (``add_partitions_req``,
``ifNotExists``) and sets the statistics of every partition it touched (``numFiles``,
``totalSize``, ``numRows``, ``lastUpdateTime``, ``totalBuckets``, ``transient_lastDdlTime``),
as Paimon's add-partition commit callback and ``HiveCatalog.alterPartitions`` do. Tags of a
``metastore.tag-to-partition`` table created or deleted through ``table.manage`` add or drop
their partition (Paimon's ``AddPartitionTagCallback``).

A failed sync is logged, never raised: the commit has landed; the next commit of the same
partitions syncs them again.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from lakestore.catalog.hive_table import TAG_TO_PARTITION, metastore_partitioned, new_partitions, partition_spec, partition_statistics
from lakestore.commit.callbacks import CommitCallback
from lakestore.commit.snapshot_commit import SnapshotCommit
from lakestore.errors import HiveMetastoreError
from lakestore.io.fileio import FileIO
from lakestore.io.hive_metastore import MetastoreClient, ttypes
from lakestore.manage import TableManagement
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.meta.snapshot import Snapshot
from lakestore.meta.tag import Tag
from lakestore.table import Table

log = logging.getLogger(__name__)


class PartitionSync:
    """Registers a table's partitions and their statistics in the metastore (picklable)."""

    def __init__(self, client: MetastoreClient, database: str, table: str) -> None:
        self.client = client
        self.database = database
        self.table = table

    def __call__(self, table: Table, snapshots: Sequence[Snapshot]) -> None:
        schema = table.schema
        if not metastore_partitioned(schema) or not schema.partition_keys or not snapshots:
            return  # tag-to-partition tables get partitions from tags, not commits
        touched: set[str] = set()
        for snapshot in snapshots:
            touched.update(f.partition_path for f in table.store.delta_files(snapshot))
        if not touched:
            return
        self.sync(table, sorted(touched), int(snapshots[-1].time_millis // 1000))

    def sync(self, table: Table, paths: Sequence[str], last_update_s: int) -> None:
        """Add ``paths`` (``dt=x/hr=y``) that hold live files and set their statistics."""
        t = ttypes()
        stats: dict[str, dict[str, int]] = {}
        buckets: dict[str, set[int]] = {}
        wanted = set(paths)
        for f in table.store.live_files():
            if f.partition_path in wanted:
                s = stats.setdefault(f.partition_path, {"files": 0, "bytes": 0, "rows": 0})
                s["files"] += 1
                s["bytes"] += f.bytes
                s["rows"] += f.rows
                buckets.setdefault(f.partition_path, set()).add(f.bucket)
        if not stats:
            return
        keys = list(table.schema.partition_keys)
        hms_table = self.client.call("get_table_req", t.GetTableRequest(dbName=self.database, tblName=self.table)).table
        parts = new_partitions(self.database, self.table, hms_table, sorted(stats), keys)
        self.client.call(
            "add_partitions_req",
            t.AddPartitionsRequest(dbName=self.database, tblName=self.table, parts=parts, ifNotExists=True, needResult=False),
        )
        fixed = table.options.bucket
        names = [_partition_name(keys, partition_spec(p)) for p in sorted(stats)]
        got = self.client.call(
            "get_partitions_by_names_req", t.GetPartitionsByNamesRequest(db_name=self.database, tbl_name=self.table, names=names)
        )
        by_values = {tuple(p.values): p for p in got.partitions or []}
        updated = []
        for path in sorted(stats):
            spec = partition_spec(path)
            partition = by_values.get(tuple(spec.get(k, "") for k in keys))
            if partition is None:
                continue
            total_buckets = fixed if fixed > 0 else len(buckets[path])
            partition.parameters = {**(partition.parameters or {}), **partition_statistics(stats[path], last_update_s, total_buckets)}
            partition.lastAccessTime = last_update_s
            updated.append(partition)
        if updated:
            self.client.call("alter_partitions", self.database, self.table, updated)

    def tag_partition(self, table: Table, tag: str, *, create: bool) -> None:
        """Add (or drop) the partition ``<tag-to-partition field>=<tag>``; nothing for other tables."""
        field = table.schema.options.get(TAG_TO_PARTITION)
        if not field:
            return
        t = ttypes()
        if not create:
            # Paimon's dropPartitions ignores a partition that is not there
            with contextlib.suppress(t.NoSuchObjectException, HiveMetastoreError):
                self.client.call("drop_partition", self.database, self.table, [tag], False)
            return
        hms_table = self.client.call("get_table_req", t.GetTableRequest(dbName=self.database, tblName=self.table)).table
        parts = new_partitions(self.database, self.table, hms_table, [f"{_escape(field)}={_escape(tag)}"], [field])
        request = t.AddPartitionsRequest(dbName=self.database, tblName=self.table, parts=parts, ifNotExists=True, needResult=False)
        self.client.call("add_partitions_req", request)


def _partition_name(keys: Sequence[str], spec: dict[str, str]) -> str:
    """HMS's partition name ``k1=v1/k2=v2`` (Hive's escaping of path characters)."""
    return "/".join(f"{_escape(k)}={_escape(spec.get(k, ''))}" for k in keys)


_UNSAFE = set("\"#%'*/:=?\\\x7f{[]^") | {chr(c) for c in range(0x20)}


def _escape(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _UNSAFE else c for c in text)


class HiveTagManagement(TableManagement[Table]):
    """``table.manage`` of a Hive catalog table: with ``metastore.tag-to-partition=<field>`` a
    created tag adds the metastore partition ``<field>=<tag>`` and a deleted tag drops it, as
    Paimon's ``AddPartitionTagCallback``."""

    def __init__(self, table: Table, sync: PartitionSync) -> None:
        super().__init__(table.store, open_branch=table.on_branch, iceberg_sources=table._iceberg_sources)
        self._table = table
        self._sync = sync

    def create_tag(
        self, name: str, snapshot_id: int | None = None, time_retained: int | str | None = None, *, watermark: int | None = None
    ) -> Tag:
        """``TableManagement.create_tag``, then the tag's metastore partition.

        Raises:
            TagAlreadyExistsError: a tag of that name exists.
            InvalidTagNameError: a name Paimon refuses.
            SnapshotNotFoundError: the snapshot (or watermark) has no snapshot.
        """
        tag = super().create_tag(name, snapshot_id, time_retained, watermark=watermark)
        self._sync.tag_partition(self._table, name, create=True)
        return tag

    def delete_tag(self, name: str) -> None:
        """``TableManagement.delete_tag``, then the tag's metastore partition.

        Raises:
            TagNotFoundError: the tag does not exist.
        """
        super().delete_tag(name)
        self._sync.tag_partition(self._table, name, create=False)


class HiveTable(Table):
    """A table opened through the Hive catalog: its commits on the main branch sync partitions
    to the metastore (``metastore.partitioned-table``)."""

    def __init__(
        self,
        path: str,
        *,
        file_io: FileIO | None = None,
        identifier: str | None = None,
        branch: str = MAIN_BRANCH,
        sync: Any = None,
        snapshot_commit: SnapshotCommit | None = None,
    ) -> None:
        self.sync = sync
        super().__init__(path, file_io=file_io, identifier=identifier, branch=branch, snapshot_commit=snapshot_commit)

    @property
    def manage(self) -> TableManagement[Table]:
        """``Table.manage``; tags of a ``metastore.tag-to-partition`` table become metastore
        partitions (``HiveTagManagement``)."""
        if self.sync is None or self.branch != MAIN_BRANCH:
            return super().manage
        return HiveTagManagement(self, self.sync)

    def _commit_callbacks(self) -> tuple[CommitCallback, ...]:
        """``Table``'s callbacks, then the partition sync to the metastore."""
        return (*super()._commit_callbacks(), HivePartitionSync(self))


class HivePartitionSync(CommitCallback):
    """After a commit on the main branch, the new partitions of a ``metastore.partitioned-table``
    go to the Hive Metastore; a failure is logged (the commit landed)."""

    name = "hive-partitions"

    def __init__(self, table: HiveTable) -> None:
        self.table = table

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        table = self.table
        if table.sync is not None and table.branch == MAIN_BRANCH:
            try:
                table.sync(table, snapshots)
            except Exception:
                log.warning("syncing the partitions of %s to the Hive Metastore failed", table.identifier, exc_info=True)
