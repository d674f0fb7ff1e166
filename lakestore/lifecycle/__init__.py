"""Table lifecycle: snapshot expiration, orphan cleanup, tags, rollback."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from lakestore.lifecycle.expire import ExpireResult, expire_snapshots, should_expire_after_commit
from lakestore.lifecycle.orphans import OrphanResult, remove_orphan_files
from lakestore.lifecycle.partition_expire import expire_partitions, partition_check_due
from lakestore.lifecycle.rollback import rollback_to
from lakestore.lifecycle.tags import TagManager, auto_create_tags

if TYPE_CHECKING:
    from lakestore.store import FileStore

__all__ = [
    "ExpireResult",
    "OrphanResult",
    "PartitionCheckClock",
    "TagManager",
    "after_commit",
    "auto_create_tags",
    "expire_partitions",
    "expire_snapshots",
    "remove_orphan_files",
    "rollback_to",
]


class PartitionCheckClock(Protocol):
    """Where the caller of ``after_commit`` keeps when partition expiration was last checked
    (``lakestore.Table`` keeps it per table object)."""

    last_partition_check_ms: int | None


def after_commit(store: FileStore, clock: PartitionCheckClock) -> None:
    """Post-commit maintenance Paimon runs in its committer: automatic tags, partition
    expiration (at most once per check interval per ``clock``, as per committer in Paimon),
    then snapshot expiration (each only when the table's options ask for it)."""
    auto_create_tags(store)
    now_ms = int(time.time() * 1000)
    if partition_check_due(store, clock.last_partition_check_ms, now_ms):
        clock.last_partition_check_ms = now_ms
        expire_partitions(store, now_ms=now_ms)  # commits an OVERWRITE, which runs this again
    if should_expire_after_commit(store):
        expire_snapshots(store)
