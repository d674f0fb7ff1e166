"""The live data files of a snapshot: manifest lists -> manifests -> merged ADD/DELETE entries."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lakestore.errors import CorruptMetadataError
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
    merged = merge_entries(entries)
    live = [e for e in merged.values() if e.kind == ADD]
    dangling = [e for e in merged.values() if e.kind == DELETE]
    if dangling and manifest_filter is None and entry_filter is None:
        name = dangling[0].file.file_name
        raise CorruptMetadataError(store.manifest_dir, f"snapshot {snapshot.id} deletes file {name} that was never added")
    return live
