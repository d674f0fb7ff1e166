"""Orphan file cleanup (Paimon's OrphanFilesClean): files under the table directory that no
snapshot or tag references and that are older than a threshold (younger ones may belong to a
commit in flight). Schema, snapshot, tag and consumer files are never touched, nor index files
but those of primary-key tables with deletion vectors or dynamic buckets (which lakestore
references); temporary
files (``.<name>.<hex>.tmp``) left by a crashed writer are orphans; empty partition and bucket
directories are removed. Symbolic links to directories are not followed, and every path is
checked to lie in the table (or its declared external paths) before anything is deleted
(``lakestore.meta.confine``)."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakestore.io.factory import io_for
from lakestore.io.fileio import FileIO, local_path, uri_scheme
from lakestore.lifecycle.files import TableFiles, has_index_files
from lakestore.lifecycle.tags import retained_references
from lakestore.meta.confine import DATA, METADATA, declared_external_roots, delete_confined

if TYPE_CHECKING:
    from lakestore.store import FileStore

DEFAULT_OLDER_THAN_MS = 86_400_000  # Paimon's default: one day
_PROTECTED_DIRS = ("schema", "snapshot", "tag", "consumer", "index", "branch", "changelog", "statistics")


@dataclass(frozen=True)
class OrphanResult:
    deleted: tuple[str, ...]  # paths relative to the table directory (absolute for external data paths)
    bytes: int
    dry_run: bool


def _linked(path: str) -> bool:
    """A symbolic link on the local file system (never followed: it may lead out of the table)."""
    return uri_scheme(path) in ("", "file") and os.path.islink(local_path(path))


def _walk(table: FileStore, folder: str, out: list[tuple[str, int, int]], dirs: list[str]) -> None:
    for status in table.file_io.list_status(folder):
        if status.is_dir and _linked(status.path):
            continue
        if status.is_dir:
            dirs.append(status.path)
            _walk(table, status.path, out, dirs)
        else:
            out.append((status.path, status.size, status.mtime_ms))


def _key(path: str) -> str:
    """One spelling per file: local paths and ``file:`` URIs as normalized local paths."""
    return os.path.normpath(local_path(path)) if uri_scheme(path) in ("", "file") else path


def _walk_data_dirs(io: FileIO, folder: str, levels: int, out: list[tuple[str, int, int]]) -> None:
    """Files of the bucket directories under ``folder`` (``levels`` partition levels deep), as
    Paimon's OrphanFilesClean lists an external data path: only ``k=v`` and ``bucket-*``
    directories, never anything else that shares the root."""
    for status in io.list_status(folder):
        if not status.is_dir or _linked(status.path):
            continue
        name = status.path.rstrip("/").rsplit("/", 1)[-1]
        if levels == 0 and name.startswith("bucket-"):
            out += [(s.path, s.size, s.mtime_ms) for s in io.list_status(status.path) if not s.is_dir]
        elif levels > 0 and "=" in name:
            _walk_data_dirs(io, status.path, levels - 1, out)


def remove_orphan_files(table: FileStore, *, older_than_ms: int | None = None, dry_run: bool = False) -> OrphanResult:
    """Delete unreferenced files last modified before ``older_than_ms`` (epoch millis; default
    now minus one day)."""
    table.schema.require_supported("remove orphan files of", table=table.path)
    threshold = older_than_ms if older_than_ms is not None else int(time.time() * 1000) - DEFAULT_OLDER_THAN_MS
    files = TableFiles(table)
    keep = retained_references(table, files)
    referenced = {_key(p) for p in keep.data | keep.changelog}
    referenced |= {_key(files.manifest_path(n)) for n in keep.manifests}
    referenced |= {_key(p) for p in keep.index}
    root = table.path
    found: list[tuple[str, int, int]] = []
    dirs: list[str] = []
    for status in table.file_io.list_status(root):
        name = os.path.basename(status.path)
        if status.is_dir and _linked(status.path):
            continue
        if status.is_dir:
            if name == "index" and has_index_files(table):
                # every index file of such a table is one lakestore reads and references
                _walk(table, status.path, found, [])
                continue
            if name in _PROTECTED_DIRS:
                continue
            dirs.append(status.path)
            _walk(table, status.path, found, dirs)
        elif name.endswith(".tmp"):
            found.append((status.path, status.size, status.mtime_ms))
    found += [
        (s.path, s.size, s.mtime_ms)
        for d in ("snapshot", "schema", "tag")
        for s in table.file_io.list_status(f"{root}/{d}")
        if s.path.endswith(".tmp")
    ]
    external: list[tuple[str, int, int]] = []
    for ext_root in _external_roots(table):
        io = io_for(table.file_io, ext_root, table.schema.options)
        base = f"{ext_root.rstrip('/')}/{files.paths.data_directory}" if files.paths.data_directory else ext_root
        _walk_data_dirs(io, base, len(table.schema.partition_keys), external)
    deleted: list[str] = []
    total = 0
    external_paths = {path for path, _, _ in external}
    doomed: dict[str, list[str]] = {METADATA: [], DATA: []}
    for path, size, mtime in sorted(found) + sorted(external):
        if _key(path) in referenced or mtime >= threshold:
            continue
        deleted.append(path if path in external_paths else os.path.relpath(path, root))
        total += size
        doomed[DATA if path in external_paths else METADATA].append(path)
    if not dry_run:
        batches = [(METADATA, doomed[METADATA]), (DATA, doomed[DATA])]
        delete_confined(table.file_io, files.folders, batches, options=table.schema.options, source=table.path)
    if not dry_run:
        for folder in sorted(dirs, key=len, reverse=True):  # deepest first
            if os.path.basename(folder) != "manifest" and not table.file_io.list_status(folder):
                with contextlib.suppress(OSError):  # not empty any more (a writer), or not a local path
                    os.rmdir(folder)
    return OrphanResult(tuple(deleted), total, dry_run)


def _external_roots(table: FileStore) -> list[str]:
    """Every root ``data-file.external-paths`` names (whatever the strategy: files written under
    an earlier strategy are still the table's)."""
    return list(declared_external_roots(table.schema.options))
