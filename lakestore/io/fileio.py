"""File access for tables. Bytes only; formats live in ``lakestore.format``.

Every file is written under a temporary name in its destination folder and then published, so
readers never see a partial file. ``try_publish`` is the atomic create-if-absent primitive that
snapshots (through ``lakestore.commit.snapshot_commit``, the commit point), schemas and tags are
published with: it makes the destination appear atomically and only if no other process created
it first (link(2), which fails with EEXIST), never a check-then-rename. ``try_publish_under_lock``
is the same for a caller holding an exclusive lock on the table. FileIO knows no snapshot and
holds no lock: the catalog lock is the publisher's (``lakestore.io.publish``).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")


@dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    size: int
    mtime_ms: int
    is_dir: bool


class FileIO(ABC):
    """The operations lakestore needs from a file system."""

    @abstractmethod
    def read_bytes(self, path: str) -> bytes: ...

    @abstractmethod
    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = True) -> None:
        """Write a whole file atomically (temp name, then rename/replace)."""

    @abstractmethod
    def try_publish(self, path: str, data: bytes) -> bool:
        """Create ``path`` with ``data`` iff it does not exist; atomic and cross-process safe.

        Raises:
            UnsafePublishError: the file system has no atomic create-if-absent (object storage
                without conditional writes); publish under a lock instead.
            OSError: the file system failed.
        """

    def try_publish_under_lock(self, path: str, data: bytes) -> bool:
        """``try_publish`` for a caller that holds an exclusive lock on the table whose metadata
        ``path`` is (the catalog lock, ``lakestore.io.publish.MetadataPublisher``): every other
        publisher of that table waits for the lock, so a file system without an atomic
        create-if-absent may check that ``path`` is absent and then write it. Here: ``try_publish``.

        Raises:
            OSError: the file system failed.
        """
        return self.try_publish(path, data)

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def list_status(self, path: str) -> list[FileStatus]: ...

    @abstractmethod
    def delete(self, path: str) -> None:
        """Delete a file; missing files are fine (deletes must be idempotent for crash recovery)."""

    @abstractmethod
    def delete_dir(self, path: str) -> None: ...

    @abstractmethod
    def mkdirs(self, path: str) -> None: ...

    @abstractmethod
    def rename(self, src: str, dst: str) -> bool:
        """Rename iff ``dst`` does not exist."""

    @abstractmethod
    def file_size(self, path: str) -> int: ...

    @abstractmethod
    def arrow_filesystem(self) -> pafs.FileSystem:
        """A pyarrow filesystem for parquet reads and writes."""

    @abstractmethod
    @contextmanager
    def open_output(self, path: str) -> Iterator[pa.NativeFile]:
        """Stream a new file; it becomes visible under ``path`` only when the block succeeds."""

    def list_names(self, path: str) -> list[str]:
        return [os.path.basename(s.path) for s in self.list_status(path)]

    def arrow_path(self, path: str) -> str:
        """``path`` as ``arrow_filesystem()`` names it (object stores drop the URI scheme)."""
        return path

    def handles(self, path: str) -> bool:
        """Whether ``path`` (a plain path or a URI) lives on this file system."""
        return uri_scheme(path) == ""

    def catalog_options(self) -> dict[str, str] | None:
        """The catalog options from which ``lakestore.io.factory.file_io_for`` builds this file
        system again, in another process (Spark executors open tables that way), credentials
        included (``lakestore.io.secrets`` tells them apart). None: a file system built in code,
        which options do not describe."""
        return None


def uri_scheme(path: str) -> str:
    """The lower-case scheme of a URI (``file:/x``, ``file:///x``, ``s3://b/k``), ``""`` for a
    plain path. A one-letter "scheme" is a Windows drive, not a scheme."""
    match = _SCHEME.match(str(path))
    return match.group(1).lower() if match else ""


def local_path(path: str) -> str:
    """A local path for ``path``: ``file:/x``, ``file:///x`` and ``file://localhost/x`` -> ``/x``
    (how Paimon Java, pypaimon and users spell a local data file's ``_EXTERNAL_PATH``); plain
    paths unchanged."""
    text = str(path)
    if uri_scheme(text) != "file":
        return text
    rest = text[len("file:") :]
    if rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise ValueError(f"{text!r} names a file on another host ({authority!r}); lakestore reads local files only through file:")
        rest = slash + tail
    return rest


class LocalFileIO(FileIO):
    """Plain local paths, and ``file:`` URIs (external data paths) for the same files."""

    def __init__(self) -> None:
        self._fs = pafs.LocalFileSystem()

    def handles(self, path: str) -> bool:
        return uri_scheme(path) in ("", "file")

    def catalog_options(self) -> dict[str, str] | None:
        # exactly this class: a subclass adds behaviour that no option describes
        return {} if type(self) is LocalFileIO else None

    def arrow_path(self, path: str) -> str:
        return local_path(path)

    @staticmethod
    def _temp_name(path: str) -> str:
        head, tail = os.path.split(path)
        return os.path.join(head, f".{tail}.{uuid.uuid4().hex}.tmp")

    def read_bytes(self, path: str) -> bytes:
        path = local_path(path)
        with open(path, "rb") as fh:
            return fh.read()

    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = True) -> None:
        path = local_path(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = self._temp_name(path)
        try:
            with open(temp, "wb") as fh:
                fh.write(data)
            if overwrite:
                os.replace(temp, path)
            elif not self.rename(temp, path):
                raise FileExistsError(errno.EEXIST, "file exists", path)
        finally:
            _remove_quietly(temp)

    def try_publish(self, path: str, data: bytes) -> bool:
        path = local_path(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = self._temp_name(path)
        try:
            with open(temp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(temp, path)
            except FileExistsError:
                return False
            return True
        finally:
            _remove_quietly(temp)

    def exists(self, path: str) -> bool:
        path = local_path(path)
        return os.path.exists(path)

    def list_status(self, path: str) -> list[FileStatus]:
        path = local_path(path)
        try:
            entries = list(os.scandir(path))
        except FileNotFoundError:
            return []
        out = []
        for entry in entries:
            try:
                st = entry.stat()
            except FileNotFoundError:
                continue
            out.append(FileStatus(entry.path, st.st_size, int(st.st_mtime * 1000), entry.is_dir()))
        return out

    def delete(self, path: str) -> None:
        path = local_path(path)
        _remove_quietly(path)

    def delete_dir(self, path: str) -> None:
        path = local_path(path)
        shutil.rmtree(path, ignore_errors=True)

    def mkdirs(self, path: str) -> None:
        path = local_path(path)
        os.makedirs(path, exist_ok=True)

    def rename(self, src: str, dst: str) -> bool:
        src, dst = local_path(src), local_path(dst)
        if os.path.isdir(src):
            # link(2) cannot take directories (EPERM). rename(2) would silently replace an
            # empty directory, so check first; a non-empty target fails with ENOTEMPTY/EEXIST.
            if os.path.lexists(dst):
                return False
            try:
                os.rename(src, dst)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    return False
                raise
            return True
        try:
            os.link(src, dst)
        except FileExistsError:
            return False
        os.unlink(src)
        return True

    def file_size(self, path: str) -> int:
        path = local_path(path)
        return os.path.getsize(path)

    def arrow_filesystem(self) -> pafs.FileSystem:
        return self._fs

    @contextmanager
    def open_output(self, path: str) -> Iterator[pa.NativeFile]:
        path = local_path(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = self._temp_name(path)
        try:
            with pa.OSFile(temp, "wb") as sink:
                yield sink
            os.replace(temp, path)
        finally:
            _remove_quietly(temp)


def _remove_quietly(path: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)
