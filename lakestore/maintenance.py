"""``table.maintenance``: the work that keeps a table healthy, with the verbs of Paimon's
procedures (``compact``, ``expire_snapshots``, ``expire_partitions``, ``remove_orphan_files``)
and a consistency check. It works on the table's ``FileStore`` (``lakestore.store``), with the
implementations in ``lakestore.compact`` and ``lakestore.lifecycle``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lakestore.compact import compact_table
from lakestore.compact.postpone import compact_postpone
from lakestore.lifecycle.check import TableCheck, check_table
from lakestore.lifecycle.expire import ExpireResult, expire_snapshots
from lakestore.lifecycle.orphans import OrphanResult, remove_orphan_files
from lakestore.lifecycle.partition_expire import expire_partitions
from lakestore.meta.bucket_mode import BucketMode
from lakestore.meta.snapshot import Snapshot
from lakestore.store import FileStore


class TableMaintenance:
    """Compaction, snapshot and partition expiration, orphan cleanup and the consistency check
    of one table on its branch; obtain it as ``table.maintenance``. Its commits (compaction,
    expired partitions) run the table's post-commit policy like any other commit of the table.

    Example::

        table.maintenance.compact(full=True)
        table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=5)
        orphans = table.maintenance.remove_orphan_files(dry_run=True)
        assert table.maintenance.check().ok
    """

    def __init__(self, store: FileStore, *, after_expire: Callable[[], None] | None = None) -> None:
        """A maintenance view of ``store``.

        Args:
            store: the table's ``FileStore`` (``table.store``).
            after_expire: run after ``expire_snapshots`` (the table's Iceberg metadata forgets
                the expired snapshots).
        """
        self.store = store
        self._after_expire = after_expire

    def __repr__(self) -> str:
        return f"TableMaintenance({self.store.identifier!r})"

    def compact(
        self, *, full: bool = False, partitions: Sequence[Mapping[str, Any]] | None = None, commit_user: str | None = None
    ) -> list[Snapshot]:
        """Compact the table (or the given partitions) and commit one COMPACT snapshot.

        ``full=True`` merges every bucket into its last level; otherwise the universal picker
        decides per bucket. Postpone-bucket tables (``bucket = -2``) get Paimon's postpone
        compaction (their postponed rows assigned to real buckets).

        Args:
            full: merge each bucket into one sorted run on its last level.
            partitions: partition value dicts (or prefixes of them) to compact; None: all.
            commit_user: the commit user of the COMPACT snapshot (default: a fresh UUID).

        Returns:
            The snapshots created (empty if nothing needed compacting).

        Raises:
            UnsupportedTableError: the table uses options or features lakestore cannot compact.
            PartitionValueError: ``partitions`` names columns that are not partition keys.
            CommitConflictError: a concurrent commit removed the files being compacted.

        Example::

            table.maintenance.compact(full=True, partitions=[{"dt": "2024-01-01"}])
        """
        if self.store.schema.bucket_mode is BucketMode.POSTPONE_MODE:
            return compact_postpone(self.store, full=full, partitions=partitions, commit_user=commit_user)
        return compact_table(self.store, full=full, partitions=partitions, commit_user=commit_user)

    def expire_snapshots(
        self,
        *,
        num_retained_min: int | None = None,
        num_retained_max: int | None = None,
        time_retained_ms: int | None = None,
        now_ms: int | None = None,
    ) -> ExpireResult:
        """Expire old snapshots and delete the files only they referenced. Snapshots a tag, a
        branch or a consumer still needs keep their files.

        Args:
            num_retained_min: keep at least this many snapshots (None: the table's
                ``snapshot.num-retained.min``).
            num_retained_max: keep at most this many (None: ``snapshot.num-retained.max``).
            time_retained_ms: keep the snapshots younger than this (None:
                ``snapshot.time-retained``).
            now_ms: the time the retention counts back from (epoch millis; default: the clock).

        Returns:
            An ``ExpireResult``: the expired snapshot ids and the files deleted.

        Raises:
            OptionError: retention values out of range (``num_retained_min`` below 1, ``max``
                below ``min``).
            UnsupportedTableError: the table uses options or features lakestore cannot maintain.

        Example::

            result = table.maintenance.expire_snapshots(num_retained_min=1, num_retained_max=2)
            print(result.expired_snapshot_ids)
        """
        result = expire_snapshots(
            self.store,
            num_retained_min=num_retained_min,
            num_retained_max=num_retained_max,
            time_retained_ms=time_retained_ms,
            now_ms=now_ms,
        )
        if self._after_expire is not None:
            self._after_expire()
        return result

    def expire_partitions(self, *, now_ms: int | None = None) -> list[dict[str, Any]]:
        """Drop partitions older than ``partition.expiration-time`` (their time read from the
        partition values) in one OVERWRITE snapshot. Also runs after commits, at most once per
        ``partition.expiration-check-interval``.

        Args:
            now_ms: the time the expiration counts back from (epoch millis; default: the clock).

        Returns:
            The dropped partitions, as dicts of partition values.

        Raises:
            OptionError: the table has no ``partition.expiration-time``.
            UnsupportedTableError: the table uses options or features lakestore cannot maintain.
        """
        return expire_partitions(self.store, now_ms=now_ms)

    def remove_orphan_files(self, *, older_than_ms: int | None = None, dry_run: bool = False) -> OrphanResult:
        """Delete the files no snapshot, tag or branch references (left by failed writes
        and commits, or by a deleted branch).

        Args:
            older_than_ms: only files last modified before this (epoch millis; default: one day
                ago), so that a commit in flight keeps its files.
            dry_run: only list the files, delete nothing.

        Returns:
            An ``OrphanResult``: the files deleted (or, with ``dry_run``, that would be).

        Raises:
            UnsupportedTableError: the table uses options or features lakestore cannot maintain.
        """
        return remove_orphan_files(self.store, older_than_ms=older_than_ms, dry_run=dry_run)

    def check(self) -> TableCheck:
        """Commits whose rows no snapshot holds: manifest lists nothing references and the data
        files they add (a commit replaced by another engine's publish, crashed, or in flight);
        and retained snapshots that fail the REST catalog's commit validation
        (``lakestore.commit.validate``: paths outside the table, missing files, unknown schema
        ids, fields outside Paimon's ranges). Reads only.

        Returns:
            A ``TableCheck`` (``.ok``: nothing found; ``.unreferenced_commits`` and
            ``.invalid_snapshots``: what was).

        Raises:
            UnsupportedTableError: the table uses a Paimon feature lakestore cannot read.
        """
        return check_table(self.store)
