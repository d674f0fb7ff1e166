"""The live data files of a snapshot: manifest lists -> manifests -> merged ADD/DELETE entries."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from lakestore.errors import CorruptMetadataError
from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.meta.manifest import ADD, DELETE, ManifestEntry, ManifestFileMeta, ManifestStore, merge_entries
from lakestore.meta.snapshot import Snapshot

ManifestFilter = Callable[[ManifestFileMeta], bool]
EntryFilter = Callable[[ManifestEntry], bool]


def data_manifests(store: ManifestStore, snapshot: Snapshot) -> list[ManifestFileMeta]:
    return store.read_list(snapshot.base_manifest_list) + store.read_list(snapshot.delta_manifest_list)


def read_entries(
    store: ManifestStore,
    metas: Iterable[ManifestFileMeta],
    *,
    manifest_filter: ManifestFilter | None = None,
    entry_filter: EntryFilter | None = None,
) -> list[ManifestEntry]:
    entries: list[ManifestEntry] = []
    for meta in metas:
        if manifest_filter is not None and not manifest_filter(meta):
            continue
        for entry in store.read_entries(meta.file_name):
            if entry_filter is None or entry_filter(entry):
                entries.append(entry)
    return entries


def live_entries(
    store: ManifestStore,
    snapshot: Snapshot | None,
    *,
    manifest_filter: ManifestFilter | None = None,
    entry_filter: EntryFilter | None = None,
) -> list[ManifestEntry]:
    """ADD entries of every file live in ``snapshot`` (optionally pruned)."""
    if snapshot is None:
        return []
    entries = read_entries(store, data_manifests(store, snapshot), manifest_filter=manifest_filter, entry_filter=entry_filter)
    return live_of(store, snapshot, entries, pruned=manifest_filter is not None or entry_filter is not None)


def live_of(store: ManifestStore, snapshot: Snapshot, entries: Iterable[ManifestEntry], *, pruned: bool = False) -> list[ManifestEntry]:
    """The ADD entries left when ``entries`` (all of ``snapshot``'s manifests' entries, in order)
    are merged. Unless ``pruned``, a DELETE of a file never added is corrupt metadata.

    Raises:
        CorruptMetadataError: a DELETE entry names a file no entry added.
    """
    merged = merge_entries(entries)
    live = [e for e in merged.values() if e.kind == ADD]
    dangling = [e for e in merged.values() if e.kind == DELETE]
    if dangling and not pruned:
        name = dangling[0].file.file_name
        raise CorruptMetadataError(store.manifest_dir, f"snapshot {snapshot.id} deletes file {name} that was never added")
    return live


def in_partitions(partitions: Collection[bytes], partition_types: Sequence[DataType], *, source: str) -> ManifestFilter:
    """Keeps the manifests whose partition statistics admit one of ``partitions`` (encoded
    partition rows): a commit's checks read only the partitions it touches."""
    if not partition_types:
        return lambda meta: True
    wanted = [decode_row(p, partition_types, source=source) for p in set(partitions)]

    def may_hold(meta: ManifestFileMeta) -> bool:
        stats = meta.partition_stats
        counts = stats.null_counts
        if counts is None or len(counts) != len(partition_types):
            return True  # no usable statistics: the manifest may hold anything
        lows = decode_row(stats.min_values, partition_types, source=source)
        highs = decode_row(stats.max_values, partition_types, source=source)
        return any(all(_admits(v, lo, hi, nc) for v, lo, hi, nc in zip(values, lows, highs, counts, strict=False)) for values in wanted)

    return may_hold


def _admits(value: Any, low: Any, high: Any, null_count: int | None) -> bool:
    if value is None:
        return null_count is None or null_count > 0
    if low is None or high is None:
        return True
    try:
        return bool(low <= value <= high)
    except TypeError:
        return True


def in_bucket_range(buckets: Callable[[int], Collection[int]] | Collection[int]) -> ManifestFilter:
    """Keeps the manifests whose ``_MIN_BUCKET``..``_MAX_BUCKET`` may hold one of ``buckets``
    (a set, or a function of the bucket count giving the set). A function is only trusted with
    the manifest's own ``_TOTAL_BUCKETS``: a manifest of entries with different bucket counts (a
    rescaled table) or from a writer that does not record it is kept. Manifests without the
    range (Paimon before 1.1) are kept."""

    def may_hold(meta: ManifestFileMeta) -> bool:
        if meta.min_bucket is None or meta.max_bucket is None:
            return True
        if callable(buckets):
            if meta.total_buckets is None or meta.total_buckets <= 0:
                return True
            wanted = buckets(meta.total_buckets)
        else:
            wanted = buckets
        return any(meta.min_bucket <= b <= meta.max_bucket for b in wanted)

    return may_hold


def above_level(level: int) -> ManifestFilter:
    """Keeps the manifests that may hold files above ``level`` (``_MAX_LEVEL``; kept without it):
    deletion-vector and first-row reads never read level 0. A DELETE names its file's level, so
    a skipped manifest's files cannot be cancelled by a DELETE elsewhere that would be missed."""
    return lambda meta: meta.max_level is None or meta.max_level > level


def all_of(*filters: ManifestFilter | None) -> ManifestFilter | None:
    """The conjunction of the given manifest filters (None when there is none)."""
    present = [f for f in filters if f is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return lambda meta: all(f(meta) for f in present)
