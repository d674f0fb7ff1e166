"""Writing manifest files (rolled at ``manifest.target-file-size``) and merging the base
manifest list so it does not grow by one manifest per commit forever."""

from __future__ import annotations

from collections.abc import Sequence

from lakestore.format.binary_row import decode_row
from lakestore.format.types import DataType
from lakestore.meta.file_scan import in_partitions
from lakestore.meta.manifest import ADD, DELETE, ManifestEntry, ManifestFileMeta, ManifestStore, merge_entries
from lakestore.meta.stats import values_stats

_ENTRY_SIZE_ESTIMATE = 120  # compressed bytes per entry, to roll manifests near the target size


def write_manifests(
    store: ManifestStore, entries: Sequence[ManifestEntry], *, schema_id: int, partition_types: Sequence[DataType], target_size: int
) -> list[ManifestFileMeta]:
    if not entries:
        return []
    per_file = max(1, target_size // _ENTRY_SIZE_ESTIMATE)
    metas = []
    decoded: dict[bytes, tuple] = {}
    for start in range(0, len(entries), per_file):
        chunk = entries[start : start + per_file]
        for e in chunk:
            if e.partition not in decoded:
                decoded[e.partition] = decode_row(e.partition, partition_types, source=store.manifest_dir)
        rows = list({decoded[e.partition] for e in chunk}) if partition_types else []
        metas.append(store.write_entries(chunk, schema_id=schema_id, partition_stats=values_stats(partition_types, rows)))
    return metas


def merge_manifests(
    store: ManifestStore,
    metas: list[ManifestFileMeta],
    *,
    schema_id: int,
    partition_types: Sequence[DataType],
    target_size: int,
    min_count: int,
) -> tuple[list[ManifestFileMeta], list[str]]:
    """Returns the base manifest list for the next snapshot and the names of manifests written.

    Below ``min_count`` manifests nothing changes. Otherwise every manifest that is small, holds
    DELETE entries or has entries deleted by another is rewritten into live ADD entries only;
    large manifests untouched by deletes are kept as they are (so their bytes are not rewritten
    every time).
    """
    if len(metas) < min_count:
        return list(metas), []
    # Large manifests without DELETE entries are kept unless another manifest deletes one of
    # their files; those whose partition statistics exclude every deleted file's partition are
    # kept without being read, so merging costs what the small and changed manifests hold.
    large = {m.file_name for m in metas if m.num_deleted_files == 0 and m.file_size >= target_size}
    entries_by_manifest = {m.file_name: store.read_entries(m.file_name) for m in metas if m.file_name not in large}
    deleted = {e.identifier for entries in entries_by_manifest.values() for e in entries if e.kind == DELETE}
    may_hold = in_partitions({key[0] for key in deleted}, partition_types, source=store.manifest_dir)
    kept: list[ManifestFileMeta] = []
    rewrite: list[ManifestEntry] = []
    for meta in metas:
        if meta.file_name in large:
            if not deleted or not may_hold(meta):
                kept.append(meta)
                continue
            entries = store.read_entries(meta.file_name)
            if not any(e.identifier in deleted for e in entries):
                kept.append(meta)
                continue
        else:
            entries = entries_by_manifest[meta.file_name]
        rewrite.extend(entries)
    live = [e for e in merge_entries(rewrite).values() if e.kind == ADD]
    if any(e.kind == DELETE for e in merge_entries(rewrite).values()):
        # A DELETE whose ADD sits in a kept manifest cannot happen (that manifest would not be
        # kept); fall back to keeping everything rather than losing a delete.
        return list(metas), []
    written = write_manifests(store, live, schema_id=schema_id, partition_types=partition_types, target_size=target_size)
    return kept + written, [m.file_name for m in written]
