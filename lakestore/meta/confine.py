"""Confinement: the one place that decides whether a path belongs to a table, and the one
place every deletion of a table's files goes through.

A table's files are the files under its directory (data, changelog and index files, manifests,
snapshots, tags, schemas, branches, statistics) and the data files under the roots its
``data-file.external-paths`` option declares (whatever the strategy: files written under an
earlier strategy are still the table's). Every path is resolved before it is compared: local
paths and ``file:`` URIs with their ``..`` collapsed and their symbolic links followed (a
directory linked out of the table is outside it), object-store URIs with their key normalised.

``delete_confined`` checks a whole batch first and deletes nothing when one path is outside
(``PathOutsideTableError``): metadata naming a path outside its table is hostile or damaged, so
the operation reading it stops before it removes anything and names what it found. The check is
made whatever wrote the metadata (lakestore, another engine, a client of the REST catalog).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from lakestore.errors import PathOutsideTableError
from lakestore.io.factory import io_for
from lakestore.io.fileio import FileIO, local_path, uri_scheme

DATA, MANIFEST, INDEX, STATISTICS, METADATA = "data", "manifest", "index", "statistics", "metadata"
# folders of the table directory that hold no data or changelog file
METADATA_DIRS = ("schema", "snapshot", "tag", "consumer", "branch", "changelog", "manifest", "index", "statistics")
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(//([^/?#]*))?(.*)$")


def is_plain_name(name: object) -> bool:
    """A file name as Paimon writes them: non-empty, no directory part, not ``.``/``..``, no
    NUL or control character."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and not any(ord(c) < 32 for c in name)
    )


def declared_external_roots(options: Mapping[str, str]) -> tuple[str, ...]:
    """Every root ``data-file.external-paths`` names (whatever the strategy)."""
    text = str(options.get("data-file.external-paths") or "")
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _resolve_local(path: str) -> str:
    return os.path.realpath(local_path(path))


def resolve(path: str) -> str:
    """One canonical spelling of ``path`` to compare: a local path (``file:`` URIs included)
    with ``..`` collapsed and symbolic links followed; ``scheme://authority/key`` with the key
    normalised (``a//b/../c`` -> ``a/c``, never above the authority)."""
    text = str(path)
    scheme = uri_scheme(text)
    if scheme in ("", "file"):
        return _resolve_local(text)
    match = _URI.match(text)
    if match is None:
        return text
    authority, key = match.group(3) or "", match.group(4) or "/"
    normal = posixpath.normpath("/" + key.lstrip("/"))
    normal = "/" + normal.lstrip("/")  # normpath keeps a leading "//"
    return f"{scheme}://{authority}{normal if normal != '/' else ''}"


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class TableFolders:
    """Where one table's files may be: its directory and its declared external data roots,
    both resolved once (``TableFolders.of(table.path, table.schema.options)``)."""

    root: str
    external: tuple[str, ...] = ()
    resolved_root: str = field(init=False)
    resolved_external: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resolved_root", resolve(self.root))
        object.__setattr__(self, "resolved_external", tuple(resolve(r) for r in self.external))

    @classmethod
    def of(cls, table_path: str, options: Mapping[str, str]) -> TableFolders:
        return cls(table_path, declared_external_roots(options))

    def _area_ok(self, resolved: str, area: str) -> bool:
        root = self.resolved_root
        if area == DATA:
            if any(_under(resolved, r) for r in self.resolved_external):
                return True
            if not _under(resolved, root) or resolved == root:
                return False
            first = resolved[len(root.rstrip("/")) + 1 :].split("/", 1)[0]
            return first not in METADATA_DIRS
        if area == INDEX:  # under index/, next to data files (index-file-in-data-file-dir), or external
            return _under(resolved, f"{root}/index") or self._area_ok(resolved, DATA)
        if area in (MANIFEST, STATISTICS):
            return _under(resolved, f"{root}/{area}") and resolved != f"{root}/{area}"
        return _under(resolved, root) and resolved != root

    def outside(self, paths: Iterable[str], area: str = DATA, *, follow_files: bool = False) -> tuple[str, ...]:
        """The paths of ``paths`` that do not lie in ``area`` of the table (``DATA``: the table
        directory but its metadata folders, or an external root; ``MANIFEST``/``STATISTICS``:
        that folder; ``INDEX``: ``index/`` or where data may be; ``METADATA``: anywhere in the
        table directory). Directories are resolved once each; with ``follow_files`` a file that
        is a symbolic link is judged by where it points (what a read of it would open)."""
        resolved_dirs: dict[str, str] = {}
        bad: list[str] = []
        for path in paths:
            text = str(path)
            head, _, name = text.rpartition("/")
            if not is_plain_name(name) or not head:
                bad.append(text)
                continue
            directory = resolved_dirs.get(head)
            if directory is None:
                directory = resolved_dirs[head] = resolve(head)
            full = f"{directory.rstrip('/')}/{name}"
            if follow_files and uri_scheme(text) in ("", "file") and os.path.islink(full):
                full = os.path.realpath(full)
            if not self._area_ok(full, area):
                bad.append(text)
        return tuple(bad)

    def external_outside(self, paths: Iterable[str]) -> tuple[str, ...]:
        """The ``_EXTERNAL_PATH`` values of ``paths`` that lie under none of the declared
        external roots (an external path into the table directory is not external either)."""
        roots = self.resolved_external
        resolved_dirs: dict[str, str] = {}
        bad: list[str] = []
        for path in paths:
            text = str(path)
            head, _, name = text.rpartition("/")
            if head and head not in resolved_dirs:
                resolved_dirs[head] = resolve(head)
            full = f"{resolved_dirs[head].rstrip('/')}/{name}" if head else text
            if not head or not is_plain_name(name) or not any(_under(full, r) and full != r for r in roots):
                bad.append(text)
        return tuple(bad)

    def check(self, paths: Iterable[str], area: str = DATA, *, source: str) -> None:
        """Raise ``PathOutsideTableError`` (naming ``source``, the metadata that named them)
        when any of ``paths`` is outside ``area``."""
        bad = self.outside(paths, area)
        if bad:
            raise PathOutsideTableError(source, bad)


def delete_confined(
    file_io: FileIO,
    folders: TableFolders,
    batches: Sequence[tuple[str, Iterable[str]]],
    *,
    options: Mapping[str, str] | None = None,
    source: str,
) -> None:
    """Delete every path of ``batches`` (``(area, paths)``, in order) iff all of them lie in
    their area of the table; else raise ``PathOutsideTableError`` and delete nothing. A file
    that is itself a symbolic link is removed as a link (what it points to stays). Paths on
    another file system (external data on S3 for a local table) go through that file system's
    FileIO, built from ``options``."""
    listed = [(area, list(paths)) for area, paths in batches]
    bad = tuple(p for area, paths in listed for p in folders.outside(paths, area))
    if bad:
        raise PathOutsideTableError(source, bad)
    for _, paths in listed:
        for path in paths:
            io_for(file_io, path, options).delete(path)


def delete_dir_confined(file_io: FileIO, folders: TableFolders, path: str, *, source: str) -> None:
    """Delete folder ``path`` and everything in it iff it lies in the table directory and is
    not a symbolic link (which would take the deletion elsewhere)."""
    text = str(path).rstrip("/")
    if uri_scheme(text) in ("", "file") and os.path.islink(local_path(text)):
        raise PathOutsideTableError(source, (text,))
    folders.check([text], METADATA, source=source)
    file_io.delete_dir(text)
