"""Which files a snapshot (or tag) references: manifest lists, manifests, data and changelog files.

Expiration, rollback, tag deletion and orphan cleanup all reduce to set differences over these
references. Reads of metadata that may already be gone (a crashed, half-finished expiration) go
through the ``tolerant`` variants, which treat a missing manifest or list as empty. Every
deletion goes through ``lakestore.meta.confine.delete_confined``: a path the metadata names
outside the table's folders stops the operation before anything is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lakestore.meta.confine import DATA, INDEX, MANIFEST, TableFolders, delete_confined
from lakestore.meta.consumer import ConsumerManager
from lakestore.meta.file_scan import live_entries
from lakestore.meta.index_manifest import index_file_path, read_index_manifest
from lakestore.meta.manifest import ADD, DELETE, FILE_SOURCE_APPEND, ManifestEntry, ManifestFileMeta
from lakestore.meta.paths import TablePaths
from lakestore.meta.snapshot import Snapshot

if TYPE_CHECKING:
    from lakestore.store import FileStore


def has_index_files(table: FileStore) -> bool:
    """Whether the table's snapshots hold index files lakestore maintains: deletion vectors or
    the key hash indexes of dynamic buckets (both only on primary-key tables)."""
    return bool(table.schema.primary_keys) and (table.options.deletion_vectors or table.schema.bucket_mode.dynamic)


class TableFiles:
    """Paths of the files of one table, resolved from manifest entries."""

    def __init__(self, table: FileStore) -> None:
        self.table = table
        self.file_io = table.file_io
        self.path = table.path
        self.store = table.manifests()
        self.paths = TablePaths.of(table.path, table.schema)
        self.folders = TableFolders.of(table.path, table.schema.options)
        self._index_files: dict[str, set[str]] = {}
        # primary-key tables with deletion vectors or dynamic buckets hold index files
        self._has_index = has_index_files(table)

    # -- paths --------------------------------------------------------------------------------
    def bucket_path(self, partition: bytes, bucket: int) -> str:
        return self.paths.bucket_dir(self.paths.partition_path_of(partition, source=self.store.manifest_dir), bucket)

    def entry_paths(self, entry: ManifestEntry) -> list[str]:
        """The data file of an entry (at its ``_EXTERNAL_PATH`` or in its bucket directory) and
        its extra files (which sit next to it)."""
        return self.paths.entry_paths(entry)

    def manifest_path(self, name: str) -> str:
        return self.store.path(name)

    def require_inside(self, refs: References, *, source: str) -> None:
        """``PathOutsideTableError`` when ``refs`` name a file outside the table's folders (a
        deleting operation checks its candidates with this before it changes anything)."""
        for area, paths in _batches(self, refs):
            self.folders.check(paths, area, source=source)

    # -- metadata reads -----------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        return self.file_io.exists(self.store.path(name))

    def read_list(self, name: str | None, *, tolerant: bool = False) -> list[ManifestFileMeta]:
        if not name or (tolerant and not self.exists(name)):
            return []
        return self.store.read_list(name)

    def read_entries(self, metas: Iterable[ManifestFileMeta], *, tolerant: bool = False) -> list[ManifestEntry]:
        out: list[ManifestEntry] = []
        for meta in metas:
            if tolerant and not self.exists(meta.file_name):
                continue
            out += self.store.read_entries(meta.file_name)
        return out

    @staticmethod
    def list_names(snapshot: Snapshot) -> list[str]:
        names = [snapshot.base_manifest_list, snapshot.delta_manifest_list]
        if snapshot.changelog_manifest_list:
            names.append(snapshot.changelog_manifest_list)
        return names

    def manifest_names(self, snapshot: Snapshot, *, tolerant: bool = False) -> set[str]:
        """Manifest lists of ``snapshot`` and every manifest they list (plus its index manifest)."""
        names = set(self.list_names(snapshot))
        for list_name in self.list_names(snapshot):
            names.update(m.file_name for m in self.read_list(list_name, tolerant=tolerant))
        if snapshot.index_manifest:
            names.add(snapshot.index_manifest)
        return names

    def index_paths(self, snapshot: Snapshot, *, tolerant: bool = False) -> set[str]:
        """Index files (under ``index/``: deletion vectors, key hash indexes) of the snapshot's
        index manifest."""
        name = snapshot.index_manifest
        if not self._has_index or not name or (tolerant and not self.exists(name)):
            return set()
        cached = self._index_files.get(name)
        if cached is None:
            cached = {index_file_path(self.path, e.index_file.file_name) for e in read_index_manifest(self.file_io, self.path, name)}
            self._index_files[name] = cached
        return cached

    def live_paths(self, snapshot: Snapshot) -> set[str]:
        """Data files (and extra files) live in ``snapshot``."""
        out: set[str] = set()
        for entry in live_entries(self.store, snapshot):
            out.update(self.entry_paths(entry))
        return out

    def delta_entries(self, snapshot: Snapshot, *, tolerant: bool = False) -> list[ManifestEntry]:
        return self.read_entries(self.read_list(snapshot.delta_manifest_list, tolerant=tolerant), tolerant=tolerant)

    def removed_paths(self, snapshot: Snapshot, *, tolerant: bool = False) -> set[str]:
        """Data files ``snapshot`` removed (DELETE entries of its delta). An upgrade (DELETE at
        one level, ADD of the same file at another) is not a removal."""
        entries = self.delta_entries(snapshot, tolerant=tolerant)
        readded = {p for e in entries if e.kind == ADD for p in self.entry_paths(e)}
        return {p for e in entries if e.kind == DELETE for p in self.entry_paths(e)} - readded

    def added_paths(self, snapshot: Snapshot, *, tolerant: bool = False) -> set[str]:
        return {p for e in self.delta_entries(snapshot, tolerant=tolerant) if e.kind == ADD for p in self.entry_paths(e)}

    def changelog_paths(self, snapshot: Snapshot, *, tolerant: bool = False) -> set[str]:
        if not snapshot.changelog_manifest_list:
            return set()
        metas = self.read_list(snapshot.changelog_manifest_list, tolerant=tolerant)
        return {p for e in self.read_entries(metas, tolerant=tolerant) if e.kind == ADD for p in self.entry_paths(e)}


def consumer_min_next_snapshot(table: FileStore) -> int | None:
    """Smallest ``nextSnapshot`` of the table's consumers (``consumer/consumer-<id>``): snapshots
    from there on are still to be read by someone and must not expire. A consumer file being
    rewritten (Paimon Java rewrites it in place) is read again until it parses;
    ``CorruptMetadataError`` if it never does."""
    return ConsumerManager(table.file_io, table.metadata_path).min_next_snapshot()


class References:
    """Files referenced by a set of snapshots: data (with extra files), changelog, manifests,
    deletion-vector index files."""

    def __init__(self) -> None:
        self.data: set[str] = set()
        self.changelog: set[str] = set()
        self.manifests: set[str] = set()  # names inside manifest/
        self.index: set[str] = set()  # deletion-vector index files

    def update(self, other: References) -> None:
        self.data |= other.data
        self.changelog |= other.changelog
        self.manifests |= other.manifests
        self.index |= other.index


def _tolerant_live(files: TableFiles, snapshot: Snapshot) -> set[str]:
    metas = files.read_list(snapshot.base_manifest_list, tolerant=True) + files.read_list(snapshot.delta_manifest_list, tolerant=True)
    live: dict[tuple, ManifestEntry] = {}
    for entry in files.read_entries(metas, tolerant=True):
        key = entry.identifier
        if entry.kind == ADD:
            live[key] = entry
        else:
            live.pop(key, None)
    return {p for e in live.values() for p in files.entry_paths(e)}


def chain_references(files: TableFiles, snapshots: Iterable[Snapshot], *, tolerant: bool = False) -> References:
    """References of ``snapshots`` (ascending ids). A snapshot right after one already seen
    contributes only the files its delta adds; any other contributes its whole live set, so a
    chain of N snapshots costs one full scan plus N deltas."""
    refs = References()
    previous: int | None = None
    for snapshot in sorted(snapshots, key=lambda s: s.id):
        if previous is not None and snapshot.id == previous + 1:
            refs.data |= files.added_paths(snapshot, tolerant=tolerant)
        else:
            refs.data |= _tolerant_live(files, snapshot) if tolerant else files.live_paths(snapshot)
        refs.changelog |= files.changelog_paths(snapshot, tolerant=tolerant)
        refs.manifests |= files.manifest_names(snapshot, tolerant=tolerant)
        refs.index |= files.index_paths(snapshot, tolerant=tolerant)
        previous = snapshot.id
    return refs


def changelog_references(files: TableFiles, changelog: Snapshot, *, produces_changelog: bool) -> References:
    """What a long-lived changelog (``changelog/changelog-N``) keeps, as Paimon's ChangelogDeletion
    sees it: its changelog manifest list, manifests and changelog files; without a changelog
    producer, its delta (the rows it appended: APPEND-source files) and base manifest lists.
    Tolerant: the lists of an expired snapshot may be gone already."""
    refs = References()
    if changelog.changelog_manifest_list:
        refs.manifests.add(changelog.changelog_manifest_list)
        metas = files.read_list(changelog.changelog_manifest_list, tolerant=True)
        refs.manifests.update(m.file_name for m in metas)
        refs.changelog |= {p for e in files.read_entries(metas, tolerant=True) if e.kind == ADD for p in files.entry_paths(e)}
    if not produces_changelog:
        for list_name in (changelog.base_manifest_list, changelog.delta_manifest_list):
            metas = files.read_list(list_name, tolerant=True)
            if metas or files.exists(list_name):
                refs.manifests.add(list_name)
                refs.manifests.update(m.file_name for m in metas)
        for entry in files.read_entries(files.read_list(changelog.delta_manifest_list, tolerant=True), tolerant=True):
            if entry.kind == ADD and entry.file.file_source in (None, FILE_SOURCE_APPEND):
                refs.data.update(files.entry_paths(entry))
    return refs


def _batches(files: TableFiles, refs: References) -> list[tuple[str, list[str]]]:
    """``refs`` as ``delete_confined`` batches, in Paimon's deletion order: data, changelog,
    index (before the index manifests that name them), manifests."""
    return [
        (DATA, sorted(refs.data)),
        (DATA, sorted(refs.changelog)),
        (INDEX, sorted(refs.index)),
        (MANIFEST, [files.manifest_path(n) for n in sorted(refs.manifests)]),
    ]


def delete_files(table: FileStore, files: TableFiles, candidates: References, keep: References) -> References:
    """Delete candidates that ``keep`` does not hold, in Paimon's order: data, changelog, index,
    manifests (the snapshot files and hints are the caller's). Returns what was deleted.
    ``PathOutsideTableError`` (nothing deleted) when one of them lies outside the table."""
    gone = References()
    gone.data = candidates.data - keep.data
    gone.changelog = candidates.changelog - keep.changelog
    gone.manifests = candidates.manifests - keep.manifests
    gone.index = candidates.index - keep.index
    # external paths may be on another file system: delete_confined opens each with its own
    delete_confined(table.file_io, files.folders, _batches(files, gone), options=table.schema.options, source=table.path)
    files.store.forget(gone.manifests)
    return gone
