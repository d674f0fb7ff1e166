"""A fault-injecting FileIO for reliability tests.

``FaultyFileIO`` wraps another FileIO (local by default) and makes a seeded random fraction of
reads and writes fail with ``OSError``. A write fault strikes either before the write (nothing
happens) or after it (the write happened but the caller is told it failed: a lost
acknowledgement, the nastiest case for a committer). It counts operations per kind, records
every injected fault, and tracks the file handles it hands out, so tests can assert that
failures never leak an open handle.

Parquet reads go through ``arrow_filesystem()``, a ``pyarrow.fs.PyFileSystem`` whose input
files are wrapped too, so data-file reads are counted and can fail like metadata reads.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from lakestore.io.fileio import FileIO, FileStatus, LocalFileIO

READ_OPS = frozenset({"read_bytes", "exists", "list_status", "file_size", "open_input"})
WRITE_OPS = frozenset({"write_bytes", "try_publish", "open_output", "rename", "delete", "delete_dir", "mkdirs"})


class InjectedFault(OSError):
    """The error a ``FaultyFileIO`` raises; an ``OSError`` like a real I/O failure."""


@dataclass(frozen=True, slots=True)
class Fault:
    op: str
    path: str
    when: str  # "before" (nothing happened) or "after" (it happened, the caller sees an error)


class FaultyFileIO(FileIO):
    """``FaultyFileIO(read_failure_rate=0.01, write_failure_rate=0.01, seed=7)``.

    ``enabled`` can be switched off to set up or check a table without faults. ``ops`` counts
    every operation by name, ``faults`` lists the injected ones, ``open_handles`` is the number
    of output streams and input files currently open through this FileIO.
    """

    def __init__(
        self,
        inner: FileIO | None = None,
        *,
        read_failure_rate: float = 0.0,
        write_failure_rate: float = 0.0,
        seed: int = 0,
        after_fraction: float = 0.5,
    ) -> None:
        self.inner = inner or LocalFileIO()
        self.read_failure_rate = read_failure_rate
        self.write_failure_rate = write_failure_rate
        self.after_fraction = after_fraction
        self.enabled = True
        self.ops: Counter[str] = Counter()
        self.faults: list[Fault] = []
        self.max_open_handles = 0
        self._open_handles = 0
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # readers use threads; keep the RNG and counters consistent
        self._arrow_fs = pafs.PyFileSystem(_FaultyArrowHandler(self))

    # -- bookkeeping --------------------------------------------------------------------------
    @property
    def open_handles(self) -> int:
        return self._open_handles

    @property
    def reads(self) -> int:
        return sum(n for op, n in self.ops.items() if op in READ_OPS)

    @property
    def writes(self) -> int:
        return sum(n for op, n in self.ops.items() if op in WRITE_OPS)

    @property
    def total_ops(self) -> int:
        return sum(self.ops.values())

    def _handle_opened(self) -> None:
        with self._lock:
            self._open_handles += 1
            self.max_open_handles = max(self.max_open_handles, self._open_handles)

    def _handle_closed(self) -> None:
        with self._lock:
            self._open_handles -= 1

    def _decide(self, op: str, path: str) -> str | None:
        """Count ``op`` and decide whether it fails: None, "before" or "after"."""
        with self._lock:
            self.ops[op] += 1
            if not self.enabled:
                return None
            rate = self.read_failure_rate if op in READ_OPS else self.write_failure_rate
            if rate <= 0 or self._rng.random() >= rate:
                return None
            when = "before" if op in READ_OPS or self._rng.random() >= self.after_fraction else "after"
            self.faults.append(Fault(op, path, when))
            return when

    @staticmethod
    def _fail(op: str, path: str, when: str) -> InjectedFault:
        return InjectedFault(5, f"injected {op} fault ({when})", path)  # 5 = EIO

    def _call(self, op: str, path: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        when = self._decide(op, path)
        if when == "before":
            raise self._fail(op, path, when)
        result = fn(*args, **kwargs)
        if when == "after":
            raise self._fail(op, path, when)
        return result

    # -- FileIO -------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        return self._call("read_bytes", path, self.inner.read_bytes, path)

    def write_bytes(self, path: str, data: bytes, *, overwrite: bool = True) -> None:
        self._call("write_bytes", path, self.inner.write_bytes, path, data, overwrite=overwrite)

    def try_publish(self, path: str, data: bytes) -> bool:
        return self._call("try_publish", path, self.inner.try_publish, path, data)

    def exists(self, path: str) -> bool:
        return self._call("exists", path, self.inner.exists, path)

    def list_status(self, path: str) -> list[FileStatus]:
        return self._call("list_status", path, self.inner.list_status, path)

    def delete(self, path: str) -> None:
        self._call("delete", path, self.inner.delete, path)

    def delete_dir(self, path: str) -> None:
        self._call("delete_dir", path, self.inner.delete_dir, path)

    def mkdirs(self, path: str) -> None:
        self._call("mkdirs", path, self.inner.mkdirs, path)

    def rename(self, src: str, dst: str) -> bool:
        return self._call("rename", dst, self.inner.rename, src, dst)

    def file_size(self, path: str) -> int:
        return self._call("file_size", path, self.inner.file_size, path)

    def arrow_filesystem(self) -> pafs.FileSystem:
        return self._arrow_fs

    def arrow_path(self, path: str) -> str:
        return self.inner.arrow_path(path)

    def handles(self, path: str) -> bool:
        return self.inner.handles(path)

    @contextmanager
    def open_output(self, path: str) -> Iterator[pa.NativeFile]:
        when = self._decide("open_output", path)
        if when == "before":
            raise self._fail("open_output", path, when)
        with self.inner.open_output(path) as sink:
            self._handle_opened()
            try:
                yield sink
                if when == "after":
                    # Fails after the bytes were written but before the file is published: the
                    # inner FileIO must discard its temporary file.
                    raise self._fail("open_output", path, when)
            finally:
                self._handle_closed()


class _CountedInput:
    """A Python file object around an Arrow input file that reports its close to the FileIO."""

    def __init__(self, owner: FaultyFileIO, inner: pa.NativeFile) -> None:
        self._owner = owner
        self._inner = inner
        self.closed = False
        owner._handle_opened()

    def read(self, nbytes: int = -1) -> bytes:
        return self._inner.read(None if nbytes is None or nbytes < 0 else nbytes)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._inner.seek(offset, whence)

    def tell(self) -> int:
        return self._inner.tell()

    def size(self) -> int:
        return self._inner.size()

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._inner.close()
            self._owner._handle_closed()

    def __del__(self) -> None:
        # Arrow's parquet reader drops its input file instead of closing it; the underlying file
        # closes when the last reference goes, which is when the handle really ends.
        self.close()


class _FaultyArrowHandler(pafs.FileSystemHandler):
    """Arrow filesystem view of a FaultyFileIO: input files can fail and are counted."""

    def __init__(self, owner: FaultyFileIO) -> None:
        self._owner = owner
        self._fs = owner.inner.arrow_filesystem()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _FaultyArrowHandler) and other._owner is self._owner

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return "faulty"

    def normalize_path(self, path: str) -> str:
        return self._fs.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self._fs.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self._fs.get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self._fs.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self._fs.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._fs.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise OSError("refusing to delete the root directory")

    def delete_file(self, path: str) -> None:
        self._fs.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self._fs.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self._fs.copy_file(src, dest)

    def _open(self, path: str) -> pa.PythonFile:
        when = self._owner._decide("open_input", path)
        if when is not None:
            raise self._owner._fail("open_input", path, when)
        return pa.PythonFile(_CountedInput(self._owner, self._fs.open_input_file(path)), mode="r")

    def open_input_stream(self, path: str) -> pa.PythonFile:
        return self._open(path)

    def open_input_file(self, path: str) -> pa.PythonFile:
        return self._open(path)

    def open_output_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        return self._fs.open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path: str, metadata: Any) -> pa.NativeFile:
        return self._fs.open_append_stream(path, metadata=metadata)
