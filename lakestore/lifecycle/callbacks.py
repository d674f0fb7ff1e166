"""The commit callbacks of a ``lakestore.Table`` (``lakestore.commit.callbacks``), in the order
they run after a commit that landed snapshots:

========================  ==============================================================
name                      switched on per table by
========================  ==============================================================
``iceberg``               ``metadata.iceberg.storage`` (main branch): Iceberg metadata of
                          the new snapshots
``tag-creation``          ``tag.automatic-creation`` (not ``none``; nothing on ``write-only``
                          tables, as Paimon)
``partition-expiration``  ``partition.expiration-time`` (checked at most once per
                          ``partition.expiration-check-interval`` per table object)
``snapshot-expiration``   ``snapshot.expire.execution-mode`` or a ``snapshot.num-retained.*``
                          / ``snapshot.time-retained`` option set on the table
``iceberg``               (again) the latest Iceberg metadata forgets expired snapshots
========================  ==============================================================

Each reads the table's current store when it runs (``CallbackHost.store``), so a table object
whose options view changed uses the view's options.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from lakestore.commit.callbacks import CommitCallback
from lakestore.iceberg import IcebergSources, after_expire, iceberg_enabled, write_iceberg_metadata
from lakestore.lifecycle.expire import expire_snapshots, expires_after_commit, should_expire_after_commit
from lakestore.lifecycle.partition_expire import expire_partitions, partition_check_due
from lakestore.lifecycle.tags import TagManager, auto_create_tags
from lakestore.meta.branch import MAIN_BRANCH
from lakestore.meta.options import CoreOptions
from lakestore.meta.snapshot import Snapshot
from lakestore.store import FileStore

__all__ = [
    "AutoTagCreation",
    "CallbackHost",
    "IcebergExpiration",
    "IcebergMetadata",
    "PartitionExpiration",
    "SnapshotExpiration",
    "iceberg_sources",
    "table_callbacks",
]


class CallbackHost(Protocol):
    """What a table's callbacks work on (``lakestore.Table``): its current store, and when
    partition expiration was last checked (per table object, as per committer in Paimon)."""

    @property
    def store(self) -> FileStore: ...

    last_partition_check_ms: int | None


def iceberg_sources(store: FileStore) -> IcebergSources | None:
    """The table's pieces its Iceberg metadata is generated from (None: no Iceberg metadata: not
    the main branch, or ``metadata.iceberg.storage`` unset)."""
    if store.branch != MAIN_BRANCH or not iceberg_enabled(store.schema.options):
        return None
    return IcebergSources(
        store.file_io,
        store.path,
        store.schema_manager.latest() or store.schema,
        store.schema_manager.get,
        store.manifest_store,
        store.snapshot_manager.get,
        lambda: [(tag.name, tag.snapshot_id) for tag in sorted(TagManager(store).tags(), key=lambda t: (t.snapshot_id, t.name))],
    )


class _HostCallback(CommitCallback):
    def __init__(self, host: CallbackHost) -> None:
        self.host = host

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class IcebergMetadata(_HostCallback):
    """Iceberg-compatible metadata of each new snapshot (``metadata.iceberg.storage``)."""

    name = "iceberg"

    def enabled(self, options: CoreOptions) -> bool:
        return iceberg_enabled(options.raw())

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        sources = iceberg_sources(self.host.store)
        if sources is not None:
            for snapshot in snapshots:
                write_iceberg_metadata(sources, snapshot)


class AutoTagCreation(_HostCallback):
    """Paimon's ``TagAutoCreation`` (``tag.automatic-creation``)."""

    name = "tag-creation"

    def enabled(self, options: CoreOptions) -> bool:
        return options.get("tag.automatic-creation") not in (None, "none")

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        auto_create_tags(self.host.store)


class PartitionExpiration(_HostCallback):
    """Paimon's partition expiration after commits (``partition.expiration-time``), at most once
    per ``partition.expiration-check-interval`` per table object; it commits an OVERWRITE, which
    runs the callbacks again."""

    name = "partition-expiration"

    def enabled(self, options: CoreOptions) -> bool:
        return options.partition_expiration_ms is not None

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        store = self.host.store
        now_ms = int(time.time() * 1000)
        if partition_check_due(store, self.host.last_partition_check_ms, now_ms):
            self.host.last_partition_check_ms = now_ms
            expire_partitions(store, now_ms=now_ms)


class SnapshotExpiration(_HostCallback):
    """Snapshot (and changelog, tag, consumer) expiration after commits, when the table sets a
    retention option (``lakestore.lifecycle.expire.should_expire_after_commit``)."""

    name = "snapshot-expiration"

    def enabled(self, options: CoreOptions) -> bool:
        return expires_after_commit(options.raw())

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        store = self.host.store
        if should_expire_after_commit(store):
            expire_snapshots(store)


class IcebergExpiration(_HostCallback):
    """The latest Iceberg metadata forgets the expired snapshots (whose files may be gone); runs
    after snapshot expiration, switched with the ``iceberg`` callback."""

    name = "iceberg"

    def enabled(self, options: CoreOptions) -> bool:
        return iceberg_enabled(options.raw())

    def __call__(self, snapshots: Sequence[Snapshot]) -> None:
        expire_iceberg_snapshots(self.host.store)


def expire_iceberg_snapshots(store: FileStore) -> None:
    """The latest Iceberg metadata of ``store`` forgets the expired snapshots."""
    sources = iceberg_sources(store)
    if sources is not None:
        after_expire(sources, store.latest_snapshot(), store.snapshot_manager.earliest_id())


def table_callbacks(host: CallbackHost) -> tuple[CommitCallback, ...]:
    """A table's callbacks, in the order they run (the table above)."""
    return (IcebergMetadata(host), AutoTagCreation(host), PartitionExpiration(host), SnapshotExpiration(host), IcebergExpiration(host))
