"""Snapshot expiration (Paimon's ExpireSnapshotsImpl + SnapshotDeletion).

Which snapshots go: with ``latest`` and ``earliest`` the newest and oldest snapshot ids,
- at most ``num-retained.max`` snapshots stay: every id below ``latest - max + 1`` goes;
- at least ``num-retained.min`` stay: nothing from ``latest - min + 1`` on goes;
- a consumer's ``nextSnapshot`` and everything after it stay (consumers not updated within
  ``consumer.expiration-time`` are deleted first and protect nothing);
- at most ``snapshot.expire.limit`` snapshots go per call;
- between those bounds, a snapshot goes only when it is older than ``time-retained``; the
  first one that is not stops the scan (as Paimon's ExpireSnapshotsImpl).

What is deleted: exactly the data, changelog and manifest files that the expiring snapshots
reference and no retained snapshot or tag does; then the snapshot files (oldest first, so the
remaining ids stay contiguous) and finally the EARLIEST hint. Every step is idempotent and the
expiring snapshots' metadata is read tolerantly, so a re-run after a crash finishes the job.
When changelog retention exceeds snapshot retention, expiring snapshots first leave
``changelog/changelog-N`` and their changelog stays (``changelog_expire``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakestore.errors import OptionError
from lakestore.lifecycle.changelog_expire import Retention, changelog_retention, expire_changelogs, is_decoupled
from lakestore.lifecycle.files import TableFiles, chain_references, consumer_min_next_snapshot, delete_files
from lakestore.lifecycle.tags import TagManager, retained_references
from lakestore.meta.confine import METADATA, delete_confined
from lakestore.meta.consumer import ConsumerManager

if TYPE_CHECKING:
    from lakestore.store import FileStore


@dataclass(frozen=True)
class ExpireResult:
    expired_snapshot_ids: tuple[int, ...] = ()
    deleted_data_files: int = 0
    deleted_changelog_files: int = 0
    deleted_manifest_files: int = 0
    expired_tags: tuple[str, ...] = ()
    earliest_snapshot_id: int | None = None
    expired_changelog_ids: tuple[int, ...] = ()  # long-lived changelogs (changelog/changelog-N)

    @property
    def expired(self) -> int:
        return len(self.expired_snapshot_ids)


def expire_snapshots(
    table: FileStore,
    *,
    num_retained_min: int | None = None,
    num_retained_max: int | None = None,
    time_retained_ms: int | None = None,
    limit: int | None = None,
    now_ms: int | None = None,
) -> ExpireResult:
    table.schema.require_supported("expire snapshots of", table=table.path)
    options = table.options
    retain_min = num_retained_min if num_retained_min is not None else options.snapshot_num_retained_min
    retain_max = num_retained_max if num_retained_max is not None else options.snapshot_num_retained_max
    retain_max = sys.maxsize if retain_max is None else retain_max
    retained_ms = time_retained_ms if time_retained_ms is not None else options.snapshot_time_retained_ms
    limit = limit if limit is not None else options.snapshot_expire_limit
    if retain_min < 1:
        raise OptionError(f"num_retained_min must be >= 1, got {retain_min}")
    if retain_max < retain_min:
        raise OptionError(f"num_retained_max ({retain_max}) must be >= num_retained_min ({retain_min})")
    if retained_ms < 0 or limit < 1:
        raise OptionError("time_retained_ms must be >= 0 and the expire limit >= 1")
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    expired_tags = _expire_tags(table) if options.get("tag.time-expire-enabled") else ()
    expire_consumers(table, now_ms=now)  # first, so that an abandoned consumer protects nothing
    snapshot_retention = Retention(min=retain_min, max=retain_max, time_ms=retained_ms)
    changelogs = changelog_retention(options, snapshot_retention)
    decoupled = is_decoupled(changelogs, snapshot_retention)

    manager = table.snapshot_manager
    latest = manager.latest_id()
    earliest = manager.earliest_id()
    if latest is None or earliest is None:
        return ExpireResult(expired_tags=expired_tags)
    older_than = now - retained_ms
    low = max(latest - retain_max + 1, earliest)  # below this: over num-retained.max, goes anyway
    end = latest - retain_min + 1  # exclusive
    consumer = consumer_min_next_snapshot(table)
    if consumer is not None:
        end = min(end, consumer)
    end = min(end, earliest + limit)
    for snapshot_id in range(low, end):
        if manager.exists(snapshot_id) and older_than <= manager.get(snapshot_id).time_millis:
            end = snapshot_id  # the first snapshot still within time-retained stops the scan
            break
    result = expire_until(table, earliest, end, keep_changelogs=decoupled)
    # Long-lived changelogs expire even after the retention stopped being decoupled.
    expired_changelogs = expire_changelogs(table, changelogs, limit=limit, now_ms=now)
    return ExpireResult(
        result.expired_snapshot_ids,
        result.deleted_data_files,
        result.deleted_changelog_files,
        result.deleted_manifest_files,
        expired_tags,
        result.earliest_snapshot_id,
        expired_changelogs,
    )


def expire_until(table: FileStore, earliest: int, end_exclusive: int, *, keep_changelogs: bool = False) -> ExpireResult:
    """Expire snapshots ``[earliest, end_exclusive)``; ``end_exclusive`` must exist. With
    ``keep_changelogs`` each leaves ``changelog/changelog-N`` first, which keeps its changelog."""
    manager = table.snapshot_manager
    if end_exclusive <= earliest:
        return ExpireResult(earliest_snapshot_id=earliest)
    expiring_ids = [i for i in range(earliest, end_exclusive) if manager.exists(i)]
    files = TableFiles(table)
    expiring = [manager.get(i) for i in expiring_ids]
    candidates = chain_references(files, expiring, tolerant=True)
    files.require_inside(candidates, source=table.path)  # hostile metadata: nothing changes
    if keep_changelogs:
        for snapshot in expiring:
            manager.publish_changelog(snapshot)
    keep = retained_references(table, files, exclude_ids=expiring_ids)
    gone = delete_files(table, files, candidates, keep)
    # oldest first: the remaining ids stay contiguous
    delete_confined(table.file_io, files.folders, [(METADATA, [manager.path(i) for i in expiring_ids])], source=table.path)
    manager.write_earliest_hint(end_exclusive)
    return ExpireResult(tuple(expiring_ids), len(gone.data), len(gone.changelog), len(gone.manifests), (), end_exclusive)


def expire_consumers(table: FileStore, *, now_ms: int | None = None) -> tuple[str, ...]:
    """``consumer.expiration-time``: delete the consumers not updated within it (Paimon's
    committer does so before expiring snapshots). Returns their ids."""
    expiration = table.options.get("consumer.expiration-time")
    if expiration is None or table.options.write_only:  # Paimon's write-only committers skip it
        return ()
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    return tuple(ConsumerManager(table.file_io, table.metadata_path).expire(now - expiration))


def _expire_tags(table: FileStore) -> tuple[str, ...]:
    """Tags whose ``tagTimeRetained`` has passed since ``tagCreateTime`` (Paimon's TagTimeExpire)."""
    manager = TagManager(table)
    expired = []
    for tag in manager.tags():
        if tag.expired():
            manager.delete(tag.name)
            expired.append(tag.name)
    return tuple(expired)


def should_expire_after_commit(table: FileStore) -> bool:
    """Paimon expires after every commit; lakestore does so when the table asks for it
    (``snapshot.expire.execution-mode`` or a retention option set explicitly), so tables that
    never mention retention keep every snapshot."""
    return expires_after_commit(table.schema.options)


def expires_after_commit(options: Mapping[str, str]) -> bool:
    """Whether table ``options`` ask for expiration after commits (``should_expire_after_commit``)."""
    keys = ("snapshot.expire.execution-mode", "snapshot.num-retained.min", "snapshot.num-retained.max", "snapshot.time-retained")
    return any(k in options for k in keys)
