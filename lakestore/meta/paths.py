"""Where a table's data and changelog files live: one place that names new files and finds
existing ones, as Paimon 2.0's ``FileStorePathFactory`` / ``DataFilePathFactory`` /
``ExternalPathProvider`` do.

- A bucket's directory is ``<table>[/<data-file.path-directory>][/<partition>]/bucket-<N>``
  (``bucket-postpone`` for Paimon's postpone bucket, -2).
- New file names: ``<data-file.prefix | changelog-file.prefix><uuid>-<n><extension>``; the
  extension is ``.<format>`` (the format the file is written in: ``.parquet``, ``.orc``), or
  ``.<compression>.<format>`` (Hadoop's extension: ``zst``, ``gz``, ...) with
  ``file.suffix.include.compression``.
- With ``data-file.external-paths`` and a strategy other than ``none``, new files go under one of
  those roots (``<root>/<relative bucket path>/<name>``, entropy-inject adds hash directories)
  and their absolute path is recorded in ``_EXTERNAL_PATH``, spelled as Paimon's ``Path``
  prints it (``file:/tmp/x/...``, ``s3://bucket/...``).
- An existing file is at its ``_EXTERNAL_PATH`` when it has one, else in its bucket directory;
  its extra files sit next to it.
"""

from __future__ import annotations

import itertools
import random
import re
import struct
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lakestore.errors import OptionError
from lakestore.format.binary_row import decode_row
from lakestore.format.partition_path import partition_path
from lakestore.format.types import DataType
from lakestore.meta.manifest import DataFileMeta, ManifestEntry
from lakestore.meta.options import CoreOptions

POSTPONE_BUCKET = -2
# Hadoop's file extension of each compression (Paimon's HadoopCompressionType); None: no extension.
_COMPRESSION_EXTENSIONS: dict[str, str | None] = {
    "none": None,
    "gzip": "gz",
    "bzip2": "bz2",
    "deflate": "deflate",
    "snappy": "snappy",
    "lz4": "lz4",
    "zstd": "zst",
}
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(//([^/?#]*))?(.*)$")


def normalize_uri(text: str) -> str:
    """A path or URI as Paimon's (Hadoop's) ``Path.toString`` prints it: ``file:///tmp/x/`` ->
    ``file:/tmp/x``, ``s3://b//k/`` -> ``s3://b/k``; repeated and trailing slashes dropped."""
    text = str(text).strip()
    match = _URI.match(text)
    if match is None or len(match.group(1)) < 2:
        return _clean(text)
    scheme, _, authority, path = match.groups()
    path = _clean(path) if path else ""
    if authority:
        return f"{scheme}://{authority}{path if path != '/' else ''}"
    return f"{scheme}:{path}"


def _clean(path: str) -> str:
    cleaned = re.sub(r"/{2,}", "/", path)
    return cleaned.rstrip("/") if len(cleaned) > 1 else cleaned


def join(parent: str, child: str) -> str:
    return f"{parent.rstrip('/')}/{child}" if child else parent


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit as Guava's ``Hashing.murmur3_32()`` computes it (signed int)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & 0xFFFFFFFF
    blocks = len(data) // 4
    for (k,) in struct.iter_unpack("<I", data[: blocks * 4]):
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * c2) & 0xFFFFFFFF
        h ^= k
        h = ((h << 13) | (h >> 19)) & 0xFFFFFFFF
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    tail = data[blocks * 4 :]
    k = 0
    for i, byte in enumerate(tail):
        k |= byte << (8 * i)
    if tail:
        k = (k * c1) & 0xFFFFFFFF
        k = ((k << 15) | (k >> 17)) & 0xFFFFFFFF
        k = (k * c2) & 0xFFFFFFFF
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def entropy_dirs(file_name: str) -> str:
    """The hash directories entropy-inject puts before a file name: the low 20 bits of the name's
    murmur3 hash as a binary string, split 4/4/4/8 (``1001/1001/1001/10011001``)."""
    bits = format((murmur3_32(file_name.encode()) | 0x80000000) & 0xFFFFFFFF, "032b")[-20:]
    return f"{bits[0:4]}/{bits[4:8]}/{bits[8:12]}/{bits[12:]}"


class _ExternalRoots:
    """Picks the external root of each new file (Paimon's ExternalPathProvider strategies)."""

    def __init__(self, roots: Sequence[str], strategy: str, weights: Sequence[int] | None) -> None:
        self.roots = list(roots)
        self.strategy = strategy
        self.weights = list(weights) if weights and strategy == "weight-robin" and len(roots) >= 2 else None
        self._position = random.randrange(len(self.roots)) if strategy != "entropy-inject" else 0
        self._lock = threading.Lock()

    def path(self, relative_bucket: str, file_name: str) -> str:
        if self.weights is not None:
            root = random.choices(self.roots, weights=self.weights)[0]
            return join(join(root, relative_bucket), file_name)
        with self._lock:
            self._position = (self._position + 1) % len(self.roots)
            root = self.roots[self._position]
        if self.strategy == "entropy-inject":
            return join(join(root, relative_bucket), f"{entropy_dirs(file_name)}/{file_name}")
        return join(join(root, relative_bucket), file_name)


def external_roots(options: CoreOptions) -> tuple[list[str], str]:
    """The roots new data files go to (empty: the table directory) and the strategy, as Paimon's
    ``AbstractFileStore.createExternalPaths`` computes them."""
    text = options.get("data-file.external-paths")
    strategy = options.get("data-file.external-paths.strategy")
    if not text or not text.strip() or strategy == "none":
        return [], strategy
    specific = options.get("data-file.external-paths.specific-fs")
    roots = []
    for raw in text.split(","):
        root = normalize_uri(raw.strip())
        scheme = _URI.match(root)
        if scheme is None or len(scheme.group(1)) < 2:
            raise OptionError(f"data-file.external-paths: {raw.strip()!r} has no scheme (write file:/path or s3://bucket/path)")
        if strategy == "specific-fs":
            if not specific:
                raise OptionError("data-file.external-paths.strategy=specific-fs needs data-file.external-paths.specific-fs (a scheme)")
            if scheme.group(1).lower() != specific.strip().lower():
                continue
        roots.append(root)
    if not roots:
        raise OptionError(f"data-file.external-paths: no path left for data-file.external-paths.strategy={strategy} ({text!r})")
    schemes = {_URI.match(r).group(1).lower() for r in roots}  # type: ignore[union-attr]
    if len(schemes) > 1:
        raise OptionError(
            f"data-file.external-paths mixes file systems ({', '.join(sorted(schemes))}): lakestore writes one bucket's "
            "files through one file system; set data-file.external-paths.strategy=specific-fs to pick one"
        )
    weights = options.get("data-file.external-paths.weights")
    if strategy == "weight-robin" and weights and len(roots) >= 2 and len(weights) != len(roots):
        raise OptionError(f"data-file.external-paths.weights names {len(weights)} weights for {len(roots)} data-file.external-paths")
    return roots, strategy


@dataclass(frozen=True, slots=True)
class NewFile:
    name: str
    path: str
    external_path: str | None  # what ``_EXTERNAL_PATH`` records (None: in the bucket directory)


class DataFilePaths:
    """Names the new data and changelog files of one (partition, bucket) and resolves existing
    ones (Paimon's DataFilePathFactory: one uuid per factory, a counter per file)."""

    def __init__(self, table: TablePaths, partition: str, bucket: int) -> None:
        self.table = table
        self.partition = partition
        self.bucket = bucket
        self.relative = table.relative_bucket_path(partition, bucket)
        self.directory = join(table.table_path, self.relative)
        self._uuid = uuid.uuid4()
        self._counter = itertools.count()

    @property
    def external(self) -> bool:
        return self.table.external is not None

    def _new(self, prefix: str, file_format: str | None = None) -> NewFile:
        extension = self.table.extension if file_format is None else self.table.extension_of(file_format)
        name = f"{prefix}{self._uuid}-{next(self._counter)}{extension}"
        if self.table.external is not None:
            path = self.table.external.path(self.relative, name)
            return NewFile(name, path, path)
        return NewFile(name, join(self.directory, name), None)

    def new_data_file(self, file_format: str | None = None) -> NewFile:
        return self._new(self.table.data_prefix, file_format)

    def new_changelog_file(self, file_format: str | None = None) -> NewFile:
        return self._new(self.table.changelog_prefix, file_format)

    def new_file(self, kind: str, file_format: str | None = None) -> NewFile:
        """``kind``: "data" (``data-file.prefix``) or "changelog" (``changelog-file.prefix``); any
        other word is a literal prefix (``<kind>-``: tests tag the files of one writer).
        ``file_format``: the format the file is written in (default ``file.format``)."""
        if kind == "changelog":
            return self.new_changelog_file(file_format)
        return self.new_data_file(file_format) if kind == "data" else self._new(f"{kind}-", file_format)

    def to_path(self, f: DataFileMeta) -> str:
        return f.external_path or join(self.directory, f.file_name)


class TablePaths:
    """One table's data-file layout (Paimon's FileStorePathFactory)."""

    def __init__(
        self, table_path: str, options: CoreOptions, partition_keys: Sequence[str] = (), partition_types: Sequence[DataType] = ()
    ) -> None:
        self.table_path = table_path.rstrip("/") if len(table_path) > 1 else table_path
        self.options = options
        self.partition_keys = list(partition_keys)
        self.partition_types = list(partition_types)
        self.default_partition_name = options.partition_default_name
        directory = options.get("data-file.path-directory")
        self.data_directory: str | None = directory.strip("/") if directory and directory.strip("/") else None
        self.data_prefix: str = options.get("data-file.prefix")
        self.changelog_prefix: str = options.get("changelog-file.prefix")
        self._suffix_compression = bool(options.get("file.suffix.include.compression"))
        # the raw value: a format lakestore does not write names no new file (writes are refused)
        self.file_format = str(options.raw().get("file.format", "parquet")).strip().lower()
        self.extension = file_extension(options.file_compression, self._suffix_compression, self.file_format)
        roots, strategy = external_roots(options)
        self.external: _ExternalRoots | None = (
            _ExternalRoots(roots, strategy, options.get("data-file.external-paths.weights")) if roots else None
        )
        self.external_root_list = roots
        self._partitions: dict[bytes, str] = {}
        self._lock = threading.Lock()

    def extension_of(self, file_format: str) -> str:
        """The extension of a new file written in ``file_format``."""
        return file_extension(self.options.file_compression, self._suffix_compression, file_format)

    @classmethod
    def of(cls, table_path: str, schema: Any) -> TablePaths:
        """From a ``TableSchema`` (its options and partition keys)."""
        return cls(table_path, schema.core_options(), schema.partition_keys, schema.types_of(schema.partition_keys))

    # -- directories --------------------------------------------------------------------------
    @property
    def data_root(self) -> str:
        """Where bucket directories start: the table, or ``data-file.path-directory`` in it."""
        return join(self.table_path, self.data_directory) if self.data_directory else self.table_path

    def relative_bucket_path(self, partition: str, bucket: int) -> str:
        name = "bucket-postpone" if bucket == POSTPONE_BUCKET else f"bucket-{bucket}"
        parts = [p for p in (self.data_directory, partition) if p]
        return "/".join([*parts, name])

    def bucket_dir(self, partition: str, bucket: int) -> str:
        return join(self.table_path, self.relative_bucket_path(partition, bucket))

    def partition_path(self, values: Sequence[Any]) -> str:
        return partition_path(self.partition_keys, self.partition_types, values, default_name=self.default_partition_name)

    def partition_path_of(self, partition: bytes, *, source: str = "") -> str:
        """The directory of a serialized partition row (cached)."""
        cached = self._partitions.get(partition)
        if cached is None:
            values = decode_row(partition, self.partition_types, source=source or self.table_path)
            cached = self.partition_path(values)
            with self._lock:
                if len(self._partitions) > 65536:
                    self._partitions.clear()
                self._partitions[partition] = cached
        return cached

    def for_bucket(self, partition: str, bucket: int) -> DataFilePaths:
        return DataFilePaths(self, partition, bucket)

    # -- existing files -----------------------------------------------------------------------
    def file_path(self, partition: str, bucket: int, f: DataFileMeta) -> str:
        """An existing data or changelog file: its ``_EXTERNAL_PATH``, else in its bucket directory."""
        return f.external_path or join(self.bucket_dir(partition, bucket), f.file_name)

    def file_paths(self, partition: str, bucket: int, f: DataFileMeta) -> list[str]:
        """The file and its extra files (which sit in the same directory)."""
        main = self.file_path(partition, bucket, f)
        folder = main.rsplit("/", 1)[0]
        return [main] + [join(folder, x) for x in f.extra_files]

    def entry_path(self, entry: ManifestEntry) -> str:
        return self.file_path(self.partition_path_of(entry.partition), entry.bucket, entry.file)

    def entry_paths(self, entry: ManifestEntry) -> list[str]:
        return self.file_paths(self.partition_path_of(entry.partition), entry.bucket, entry.file)


def file_extension(compression: str, include_compression: bool, file_format: str = "parquet") -> str:
    """``.<format>``, or ``.<hadoop extension>.<format>`` with ``file.suffix.include.compression``."""
    if include_compression:
        extension = _COMPRESSION_EXTENSIONS.get(compression.lower(), compression.lower())
        if extension:
            return f".{extension}.{file_format}"
    return f".{file_format}"
