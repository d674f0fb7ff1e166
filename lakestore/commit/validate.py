"""Validation of a snapshot before it is published (the REST catalog's commit endpoint) or of a
published one (``Table.maintenance.check()``): the one place that decides whether a snapshot's
metadata is something the table can hold.

``validate_snapshot`` refuses (``InvalidCommitError``) a snapshot

- with a field outside Paimon's ranges (``check_fields``): ``version`` 1..3, ids and counts
  within Java's ``long`` and not negative where Paimon never writes negatives, strings and
  maps of bounded size;
- naming a schema id the table does not have (``schema_ids``);
- naming a manifest list, index manifest or statistics file that is not a plain file name or
  does not exist;
- whose manifest lists (base, delta, changelog) name a manifest that is not a plain name or does
  not exist;
- whose manifests name a data, changelog or extra file outside the table's folders
  (``lakestore.meta.confine``: ``..``, absolute paths and symbolic links resolved), an
  ``_EXTERNAL_PATH`` outside the declared ``data-file.external-paths``, or a file the snapshot
  reads (an ADD entry no DELETE of the snapshot cancels) that does not exist;
- whose index manifest names an index file outside the table or one that does not exist.

Manifests are immutable: a ``ValidatedManifests`` cache remembers the ones checked already
(by name and size), so a commit costs the reading of its new manifests, not of the table's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from lakestore.errors import CorruptMetadataError, InvalidCommitError, OptionError
from lakestore.io.factory import io_for
from lakestore.io.fileio import FileIO
from lakestore.meta.confine import DATA, INDEX, MANIFEST, STATISTICS, TableFolders, is_plain_name
from lakestore.meta.index_manifest import ADD as INDEX_ADD
from lakestore.meta.index_manifest import index_file_path, index_manifest_path, read_index_manifest
from lakestore.meta.manifest import ADD, DELETE, FileKey, ManifestEntry, ManifestFileMeta, ManifestStore
from lakestore.meta.paths import TablePaths
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MAX_VERSION = 3  # Paimon 2.0's Snapshot.CURRENT_VERSION
MAX_STRING = 4096  # commitUser, operation, uuid, file names
MAX_PROPERTIES_BYTES = 65536  # properties keys and values together
MAX_LOG_OFFSETS = 65536
_NON_NEGATIVE = (
    "schema_id",
    "time_millis",
    "total_record_count",
    "changelog_record_count",
    "base_manifest_list_size",
    "delta_manifest_list_size",
    "changelog_manifest_list_size",
    "next_row_id",
)
_LONGS = ("commit_identifier", "delta_record_count", "watermark")


def _invalid(snapshot: Snapshot, reason: str) -> InvalidCommitError:
    return InvalidCommitError(f"snapshot {snapshot.id}: {reason}")


def _shown(table_path: str, paths: Iterable[str]) -> list[str]:
    """At most five paths, relative to the table when in it (messages name no server path)."""
    prefix = table_path.rstrip("/") + "/"
    return [p[len(prefix) :] if p.startswith(prefix) else p for p in list(paths)[:5]]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_fields(snapshot: Snapshot) -> None:
    """``InvalidCommitError`` when a field is outside the range Paimon Java's ``Snapshot``
    gives it (a Java ``long`` or ``int``; counts, sizes, ids and times never negative)."""
    if not _is_int(snapshot.version) or not 1 <= snapshot.version <= MAX_VERSION:
        raise _invalid(snapshot, f"version {snapshot.version!r} is not 1..{MAX_VERSION}")
    if not _is_int(snapshot.id) or not 1 <= snapshot.id <= LONG_MAX:
        raise _invalid(snapshot, "id must be 1..2^63-1")
    for attr in _NON_NEGATIVE:
        value = getattr(snapshot, attr)
        if value is not None and (not _is_int(value) or not 0 <= value <= LONG_MAX):
            raise _invalid(snapshot, f"{attr} {value!r} is not 0..2^63-1")
    for attr in _LONGS:
        value = getattr(snapshot, attr)
        if value is not None and (not _is_int(value) or not LONG_MIN <= value <= LONG_MAX):
            raise _invalid(snapshot, f"{attr} {value!r} is not a Java long")
    for attr in ("commit_user", "uuid", "operation", "statistics"):
        value = getattr(snapshot, attr)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_STRING):
            raise _invalid(snapshot, f"{attr} is not a string of at most {MAX_STRING} characters")
    for attr in ("changelog_manifest_list", "index_manifest"):
        value = getattr(snapshot, attr)
        if value is not None and not isinstance(value, str):
            raise _invalid(snapshot, f"{attr} is not a string")
    props = snapshot.properties
    if props is not None:
        if not isinstance(props, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in props.items()):
            raise _invalid(snapshot, "properties must map strings to strings")
        if sum(len(k) + len(v) for k, v in props.items()) > MAX_PROPERTIES_BYTES:
            raise _invalid(snapshot, f"properties hold more than {MAX_PROPERTIES_BYTES} characters")
    offsets = snapshot.log_offsets
    if offsets is not None:
        if not isinstance(offsets, dict) or len(offsets) > MAX_LOG_OFFSETS:
            raise _invalid(snapshot, "logOffsets must be a map of at most 65536 buckets")
        for key, value in offsets.items():
            if not str(key).lstrip("-").isdigit() or not _is_int(value) or not LONG_MIN <= value <= LONG_MAX:
                raise _invalid(snapshot, "logOffsets must map bucket numbers to Java longs")


@dataclass(frozen=True, slots=True)
class ManifestSummary:
    """What validation keeps of a manifest it checked: the identifiers its DELETE entries
    cancel (a later manifest's ADD of the same file is then no file the snapshot reads)."""

    size: int
    deletes: frozenset[FileKey]


class ValidatedManifests:
    """Manifests checked already, by path and size (a bounded, thread-safe LRU)."""

    def __init__(self, capacity: int = 65536) -> None:
        self._items: OrderedDict[str, ManifestSummary] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def get(self, path: str, size: int) -> ManifestSummary | None:
        with self._lock:
            found = self._items.get(path)
            if found is None or found.size != size:
                return None
            self._items.move_to_end(path)
            return found

    def put(self, path: str, summary: ManifestSummary) -> None:
        with self._lock:
            self._items[path] = summary
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)


class SnapshotValidator:
    """Validates snapshots of one table (``table_path``, at ``schema``'s options and partition
    keys); ``cache`` is shared across calls (and tables: it is keyed by path)."""

    def __init__(self, file_io: FileIO, table_path: str, schema: TableSchema, *, cache: ValidatedManifests | None = None) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.options = schema.options
        self.store = ManifestStore(file_io, table_path)
        try:
            self.paths = TablePaths.of(table_path, schema)
        except OptionError as exc:
            raise InvalidCommitError(f"the table's data-file options are invalid: {exc}") from exc
        self.folders = TableFolders.of(table_path, schema.options)
        self.cache = cache if cache is not None else ValidatedManifests()

    # -- the snapshot ---------------------------------------------------------------------------
    def validate(self, snapshot: Snapshot, *, schema_ids: Collection[int]) -> None:
        """``InvalidCommitError`` naming the first problem found (see the module docstring)."""
        check_fields(snapshot)
        if snapshot.schema_id not in schema_ids:
            raise _invalid(snapshot, f"names schema {snapshot.schema_id}, which the table does not have")
        lists = {
            "baseManifestList": snapshot.base_manifest_list,
            "deltaManifestList": snapshot.delta_manifest_list,
            "changelogManifestList": snapshot.changelog_manifest_list,
        }
        metas: dict[str, list[ManifestFileMeta]] = {}
        for field_name, name in lists.items():
            if name is not None:
                metas[field_name] = self._read_list(snapshot, field_name, name)
        reads = metas.get("baseManifestList", []) + metas.get("deltaManifestList", [])
        self._check_manifests(snapshot, reads, changelog=False)
        self._check_manifests(snapshot, metas.get("changelogManifestList", []), changelog=True)
        if snapshot.index_manifest is not None:
            self._check_index(snapshot, snapshot.index_manifest)
        if snapshot.statistics is not None:
            path = f"{self.table_path}/statistics/{snapshot.statistics}"
            self._require_plain(snapshot, "statistics", snapshot.statistics)
            if self.folders.outside([path], STATISTICS, follow_files=True) or not self.file_io.exists(path):
                raise _invalid(snapshot, f"statistics file {snapshot.statistics!r} does not exist in the table")

    def _require_plain(self, snapshot: Snapshot, what: str, name: object) -> None:
        if not is_plain_name(name) or len(str(name)) > MAX_STRING:
            raise _invalid(snapshot, f"{what} {name!r} is not a file name")

    def _require_manifest_file(self, snapshot: Snapshot, what: str, name: str) -> str:
        self._require_plain(snapshot, what, name)
        path = self.store.path(name)
        if self.folders.outside([path], MANIFEST, follow_files=True):
            raise _invalid(snapshot, f"{what} {name!r} resolves outside the table's manifest folder")
        if not self.file_io.exists(path):
            raise _invalid(snapshot, f"{what} {name!r} does not exist: write the table's files before committing")
        return path

    def _read_list(self, snapshot: Snapshot, field_name: str, name: str) -> list[ManifestFileMeta]:
        self._require_manifest_file(snapshot, field_name, name)
        try:
            return self.store.read_list(name)
        except CorruptMetadataError as exc:
            raise _invalid(snapshot, f"{field_name} {name!r} is not a manifest list ({exc.reason})") from exc

    # -- manifests ------------------------------------------------------------------------------
    def _check_manifests(self, snapshot: Snapshot, metas: list[ManifestFileMeta], *, changelog: bool) -> None:
        summaries: dict[str, ManifestSummary] = {}
        fresh: dict[str, list[ManifestEntry]] = {}
        for meta in metas:
            self._require_plain(snapshot, "manifest", meta.file_name)
        paths = [self.store.path(m.file_name) for m in metas]
        bad = self.folders.outside(paths, MANIFEST, follow_files=True)  # one directory: resolved once
        if bad:
            raise _invalid(snapshot, f"manifest {bad[0].rsplit('/', 1)[-1]!r} resolves outside the table's manifest folder")
        for meta, path in zip(metas, paths, strict=True):
            try:
                size = self.file_io.file_size(path)
            except FileNotFoundError:
                raise _invalid(snapshot, f"manifest {meta.file_name!r} does not exist: write the table's files before committing") from None
            known = self.cache.get(path, size)
            if known is not None:
                summaries[path] = known
                continue
            try:
                entries = self.store.read_entries(meta.file_name)
            except CorruptMetadataError as exc:
                raise _invalid(snapshot, f"manifest {meta.file_name!r} is not a manifest ({exc.reason})") from exc
            self._check_entry_paths(snapshot, meta.file_name, entries)
            summaries[path] = ManifestSummary(size, frozenset(e.identifier for e in entries if e.kind == DELETE))
            fresh[path] = entries
        cancelled = frozenset().union(*(s.deletes for s in summaries.values())) if summaries else frozenset()
        for path, entries in fresh.items():
            # the files the snapshot reads (or, for a changelog, hands to streaming readers)
            needed = [e for e in entries if e.kind == ADD and (changelog or e.identifier not in cancelled)]
            self._require_existing(snapshot, path.rsplit("/", 1)[-1], (p for e in needed for p in self.paths.entry_paths(e)))
        for path, summary in summaries.items():
            self.cache.put(path, summary)

    def _check_entry_paths(self, snapshot: Snapshot, manifest: str, entries: list[ManifestEntry]) -> None:
        names = [n for e in entries for n in (e.file.file_name, *e.file.extra_files)]
        bad_names = [n for n in names if not is_plain_name(n) or len(n) > MAX_STRING]
        if bad_names:
            raise _invalid(snapshot, f"manifest {manifest!r} names files that are not file names: {bad_names[:5]!r}")
        external = [e.file.external_path for e in entries if e.file.external_path is not None]
        bad = self.folders.external_outside(external)
        if bad:
            raise _invalid(
                snapshot, f"manifest {manifest!r} names external paths outside data-file.external-paths: {_shown(self.table_path, bad)!r}"
            )
        try:
            paths = [p for e in entries for p in self.paths.entry_paths(e)]
        except CorruptMetadataError as exc:
            raise _invalid(snapshot, f"manifest {manifest!r} holds a partition the table cannot decode ({exc.reason})") from exc
        bad = self.folders.outside(paths, DATA)
        if bad:
            raise _invalid(snapshot, f"manifest {manifest!r} names files outside the table: {_shown(self.table_path, bad)!r}")

    def _require_existing(self, snapshot: Snapshot, source: str, paths: Iterable[str], area: str = DATA) -> None:
        """The files must exist and, links followed, lie in the table (a read opens them)."""
        listed = list(paths)
        if not listed:
            return
        bad = self.folders.outside(listed, area, follow_files=True)
        if bad:
            raise _invalid(snapshot, f"{source!r} names files that are links out of the table: {_shown(self.table_path, bad)!r}")
        missing = [p for p in listed if not io_for(self.file_io, p, self.options).exists(p)]
        if missing:
            shown = [p.rsplit("/", 1)[-1] for p in missing[:5]]
            raise _invalid(snapshot, f"{source!r} names {len(missing)} file(s) that do not exist: {shown!r}")

    # -- index manifest -------------------------------------------------------------------------
    def _check_index(self, snapshot: Snapshot, name: str) -> None:
        self._require_plain(snapshot, "indexManifest", name)
        path = index_manifest_path(self.table_path, name)
        if self.folders.outside([path], MANIFEST, follow_files=True) or not self.file_io.exists(path):
            raise _invalid(snapshot, f"indexManifest {name!r} does not exist: write the table's files before committing")
        try:
            entries = read_index_manifest(self.file_io, self.table_path, name)
        except CorruptMetadataError as exc:
            raise _invalid(snapshot, f"indexManifest {name!r} is not an index manifest ({exc.reason})") from exc
        bad_names = [e.index_file.file_name for e in entries if not is_plain_name(e.index_file.file_name)]
        if bad_names:
            raise _invalid(snapshot, f"indexManifest {name!r} names files that are not file names: {bad_names[:5]!r}")
        paths = [index_file_path(self.table_path, e.index_file.file_name, e.index_file.external_path) for e in entries]
        bad = self.folders.outside(paths, INDEX)
        if bad:
            raise _invalid(snapshot, f"indexManifest {name!r} names files outside the table: {_shown(self.table_path, bad)!r}")
        live = [p for e, p in zip(entries, paths, strict=True) if e.kind == INDEX_ADD]
        self._require_existing(snapshot, name, live, INDEX)


def validate_snapshot(
    file_io: FileIO,
    table_path: str,
    schema: TableSchema,
    snapshot: Snapshot,
    *,
    schema_ids: Collection[int],
    cache: ValidatedManifests | None = None,
) -> None:
    """``SnapshotValidator(file_io, table_path, schema, cache=cache).validate(snapshot, ...)``."""
    SnapshotValidator(file_io, table_path, schema, cache=cache).validate(snapshot, schema_ids=schema_ids)
