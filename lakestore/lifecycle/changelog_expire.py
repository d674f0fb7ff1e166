"""Changelog retention decoupled from snapshot retention (Paimon's ExpireChangelogImpl).

When ``changelog.num-retained.min/max`` or ``changelog.time-retained`` exceed their snapshot
counterparts, an expiring snapshot leaves its metadata as ``changelog/changelog-N`` and keeps its
changelog (with a changelog producer: the changelog files; without: the rows it appended), so
streaming readers can start before the earliest snapshot. Those long-lived changelogs then expire
by the changelog retention, with the same bounds as snapshots: at most ``max`` and at least
``min`` counted back from the latest snapshot, never what a consumer still needs, at most
``snapshot.expire.limit`` per call, and only once older than ``time-retained``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakestore.lifecycle.files import References, TableFiles, changelog_references, consumer_min_next_snapshot, delete_files
from lakestore.lifecycle.tags import retained_references
from lakestore.meta.confine import METADATA, delete_confined

if TYPE_CHECKING:
    from lakestore.meta.options import CoreOptions
    from lakestore.store import FileStore


@dataclass(frozen=True, slots=True)
class Retention:
    """How many snapshots (or changelogs) to keep and for how long."""

    min: int
    max: int  # ``sys.maxsize`` when unbounded
    time_ms: int


def changelog_retention(options: CoreOptions, snapshots: Retention) -> Retention:
    """The changelog retention: each option defaults to the snapshot retention in force."""
    retain_max = options.changelog_num_retained_max
    retain_min = options.changelog_num_retained_min
    time_ms = options.changelog_time_retained_ms
    return Retention(
        min=snapshots.min if retain_min is None else retain_min,
        max=snapshots.max if retain_max is None else retain_max,
        time_ms=snapshots.time_ms if time_ms is None else time_ms,
    )


def is_decoupled(changelogs: Retention, snapshots: Retention) -> bool:
    """Paimon decouples when any changelog bound keeps more than the snapshot one."""
    return changelogs.max > snapshots.max or changelogs.min > snapshots.min or changelogs.time_ms > snapshots.time_ms


def expire_changelogs(table: FileStore, retention: Retention, *, limit: int, now_ms: int) -> tuple[int, ...]:
    """Expire long-lived changelogs beyond ``retention``; returns their ids."""
    manager = table.snapshot_manager
    ids = manager.changelog_ids()
    latest = manager.latest_id()
    if not ids or latest is None:
        return ()
    earliest_changelog, latest_changelog = ids[0], ids[-1]
    low = max(latest - retention.max + 1, earliest_changelog)
    end = latest - retention.min + 1  # exclusive
    consumer = consumer_min_next_snapshot(table)
    if consumer is not None:
        end = min(end, consumer)
    end = min(end, earliest_changelog + limit, latest_changelog)
    older_than = now_ms - retention.time_ms
    present = set(ids)
    for changelog_id in range(low, end + 1):
        if changelog_id in present and older_than <= manager.get_changelog(changelog_id).time_millis:
            end = changelog_id
            break
    expiring = [i for i in ids if i < end]
    if not expiring:
        return ()
    files = TableFiles(table)
    produces_changelog = table.options.changelog_producer != "none"
    candidates = References()
    for changelog_id in expiring:
        candidates.update(changelog_references(files, manager.get_changelog(changelog_id), produces_changelog=produces_changelog))
    files.require_inside(candidates, source=table.path)  # hostile metadata: nothing changes
    # Metadata first: a crash from here on leaves unreferenced files for orphan cleanup, never a
    # changelog whose files are gone.
    metadata = [manager.changelog_path(i) for i in expiring]
    delete_confined(table.file_io, files.folders, [(METADATA, metadata)], source=table.path)
    delete_files(table, files, candidates, retained_references(table, files))
    table.file_io.write_bytes(f"{manager.changelog_dir}/EARLIEST", str(end).encode())
    return tuple(expiring)
