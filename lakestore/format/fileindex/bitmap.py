"""Paimon's ``bitmap`` file index (``BitmapFileIndex``): one RoaringBitmap of row positions per
distinct value of the column, and one of its nulls.

Layout (big-endian, ``BitmapFileIndexMeta`` / ``BitmapFileIndexMetaV2``): a version byte (option
``version``, default 2), the row count, the number of distinct non-null values, a has-null byte
and, when there are nulls, the null bitmap's offset (V2: and its length). V1 then lists every
value and its bitmap's offset; V2 sorts the values (Java's comparator: numbers by value, floats
as ``Float.compare``, strings by unsigned bytes), cuts them into index blocks of at most
``index-block-size`` bytes (default 16 kb), writes the number of blocks, each block's first value
and offset, the blocks' total size, then the blocks (entry count; value, offset, length per
entry). The bitmaps follow (portable RoaringBitmap serialization, ``runOptimize`` first); a value
(or null) on a single row has no bitmap: its offset is ``-1 - row``. Values are keyed as
:mod:`lakestore.format.fileindex.keys` says (strings: int length + UTF-8 bytes).

Java collects the bitmaps in a ``HashMap`` and writes them in its iteration order; the writer
here reproduces that order (:func:`~lakestore.format.fileindex.java_hashmap.hashmap_order`), so its bytes
are Java's. Reads follow Java's answers: ``not_equal`` and ``not in`` are the complement of the
values' rows over all rows, nulls included.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import CorruptMetadataError, OptionError, UnsupportedTableError, UnsupportedTypeError
from lakestore.format.fileindex.base import FileIndexReader, FileIndexResult, FileIndexType, FileIndexWriter
from lakestore.format.fileindex.java_hashmap import hashmap_order
from lakestore.format.fileindex.keys import comparable_keys, float_order, java_hashes, key_array, key_kind, literal_key
from lakestore.format.roaring import read_bitmap, serialize_bitmap, serialize_bitmaps
from lakestore.format.types import DataType
from lakestore.units import parse_memory

BITMAP_INDEX = "bitmap"
VERSION_1 = 1
VERSION_2 = 2
_SOURCE = "bitmap file index"
_FIXED_SIZES = {"i1": 1, "i2": 2, "i4": 4, "i8": 8, "f4": 4, "f8": 8, "b1": 1}
_STRUCT_CODES = {"i1": ">b", "i2": ">h", "i4": ">i", "i8": ">q", "f4": ">i", "f8": ">q", "b1": ">b"}


def _key_dtype(kind: str) -> str:
    return {"f4": ">i4", "f8": ">i8", "b1": ">i1"}.get(kind, ">" + kind)


# ---------------------------------------------------------------- writer


class BitmapIndexWriter(FileIndexWriter):
    """Collects a column's keys; ``to_bytes`` builds Java's bytes for them."""

    def __init__(self, data_type: DataType, options: Mapping[str, str]) -> None:
        kind = key_kind(data_type)
        if kind is None:
            raise UnsupportedTypeError(f"the bitmap file index does not support type {data_type}")
        self.data_type = data_type
        self.kind = kind
        version = str(options.get("version", VERSION_2))
        self.version = int(version) if version.isdigit() else -1
        if self.version not in (VERSION_1, VERSION_2):
            raise OptionError(f"invalid bitmap file index version {self.version} (1 or 2)")
        try:
            self.block_size = parse_memory(options.get("index-block-size", "16kb"))
        except ValueError as exc:
            raise OptionError(f"invalid bitmap file index index-block-size: {exc}") from exc
        self._chunks: list[pa.Array] = []

    def add(self, values: pa.Array) -> None:
        self._chunks.append(key_array(self.data_type, values))

    def to_bytes(self) -> bytes:
        keys = pa.concat_arrays(self._chunks) if self._chunks else key_array(self.data_type, pa.array([], self.data_type.to_arrow()))
        return encode_bitmap_index(self.kind, keys, self.version, self.block_size)


def encode_bitmap_index(kind: str, keys: pa.Array, version: int = VERSION_2, block_size: int = 16 * 1024) -> bytes:
    """A bitmap index over ``keys`` (see :func:`~lakestore.format.fileindex.keys.key_array`), in
    row order: Java's bytes."""
    rows = len(keys)
    encoded = pc.dictionary_encode(keys)
    dictionary = encoded.dictionary
    indices = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)).astype(np.int64)
    valid = indices >= 0
    nulls = np.flatnonzero(~valid)
    positions = np.flatnonzero(valid)
    ids = indices[valid]
    n = len(dictionary)
    by_value = positions[np.argsort(ids, kind="stable")]
    counts = np.bincount(ids, minlength=n)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    first_rows = by_value[starts] if n else np.empty(0, np.int64)

    # Java's HashMap order of the values (inserted at their first row); a call after the last
    # insertion (any later non-null row) may resize the map once more
    resize_after_last = bool(n) and bool(positions[-1] > first_rows[n - 1])
    order = hashmap_order(java_hashes(kind, dictionary), resize_after_last, lambda: comparable_keys(kind, dictionary))

    # the bitmaps of the values on more than one row, in that order; one row's is its offset
    multi = order[counts[order] > 1]
    multi_counts = counts[multi]
    gather = np.repeat(starts[multi] - (np.cumsum(multi_counts) - multi_counts), multi_counts) + np.arange(int(multi_counts.sum()))
    bodies, sizes = serialize_bitmaps(by_value[gather].astype(np.uint32), np.concatenate(([0], np.cumsum(multi_counts))))
    null_bytes = serialize_bitmap(nulls.astype(np.uint32))
    offsets = -1 - first_rows.astype(np.int64)
    lengths = np.full(n, -1, dtype=np.int64)
    offsets[multi] = (len(null_bytes) if nulls.size > 1 else 0) + np.cumsum(sizes) - sizes
    lengths[multi] = sizes

    null_offset = -1 - int(nulls[0]) if nulls.size == 1 else 0
    out = bytearray(struct.pack(">biib", version, rows, n, 1 if nulls.size else 0))
    if nulls.size:
        out += struct.pack(">i", null_offset)
        if version == VERSION_2:
            out += struct.pack(">i", len(null_bytes))
    if version == VERSION_1:
        out += _records(kind, dictionary, order, offsets[order])[0].tobytes()
    else:
        out += _v2_meta(kind, dictionary, offsets, lengths, block_size)
    if nulls.size > 1:
        out += null_bytes
    out += bodies
    return bytes(out)


def _records(kind: str, dictionary: pa.Array, take: np.ndarray, *ints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the values at indexes ``take``: each value as Java's ``DataOutput`` writes it (strings:
    an int length and the UTF-8 bytes), then the given columns as big-endian ints. Returns the
    bytes (uint8) and each record's size."""
    m = len(take)
    if kind == "str":
        values = dictionary.take(pa.array(take, pa.int64())).cast(pa.large_binary())
        offsets = np.frombuffer(values.buffers()[1], dtype=np.int64, count=m + 1, offset=values.offset * 8)
        data_buf = values.buffers()[2]
        data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
        lens = np.diff(offsets)
        key_sizes = 4 + lens
    else:
        key_sizes = np.full(m, _FIXED_SIZES[kind], dtype=np.int64)
    sizes = key_sizes + 4 * len(ints)
    starts = np.cumsum(sizes) - sizes
    out = np.zeros(int(sizes.sum()), dtype=np.uint8)
    if kind == "str":
        _put_be(out, starts, lens, 4)
        total = int(lens.sum())
        within = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
        out[np.repeat(starts + 4, lens) + within] = data[offsets[0] : offsets[0] + total]
    else:
        # fixed-width records: one structured array
        record = np.empty(m, dtype=[("key", _key_dtype(kind))] + [(f"int{c}", ">i4") for c in range(len(ints))])
        record["key"] = np.asarray(dictionary.to_numpy(zero_copy_only=False))[take]
        for c, column in enumerate(ints):
            record[f"int{c}"] = column
        return np.frombuffer(record.tobytes(), dtype=np.uint8), sizes
    for c, column in enumerate(ints):
        _put_be(out, starts + key_sizes + 4 * c, column, 4)
    return out, sizes


def _put_be(out: np.ndarray, dest: np.ndarray, values: np.ndarray, width: int) -> None:
    values = np.asarray(values, dtype=np.int64)
    for b in range(width):
        out[dest + b] = (values >> (8 * (width - 1 - b))) & 0xFF


def sort_keys(kind: str, dictionary: pa.Array) -> np.ndarray:
    """Indexes of the values in Java's comparator order (``BitmapFileIndexMetaV2.getComparator``)."""
    if kind == "str":
        return np.asarray(pc.sort_indices(dictionary.cast(pa.large_binary())).to_numpy(zero_copy_only=False))
    values = np.asarray(dictionary.to_numpy(zero_copy_only=False))
    if kind in ("f4", "f8"):
        values = float_order(values)
    return np.argsort(values, kind="stable")


def _v2_meta(kind: str, dictionary: pa.Array, offsets: np.ndarray, lengths: np.ndarray, block_size: int) -> bytes:
    """V2's index: the block count, each block's first value and offset, the blocks' total size,
    then the blocks (entry count; value, offset, length per entry), values in sorted order, each
    block as full as ``block_size`` allows (counting its entry count)."""
    order = sort_keys(kind, dictionary)
    entries, sizes = _records(kind, dictionary, order, offsets[order], lengths[order])
    cum = np.concatenate(([0], np.cumsum(sizes)))
    firsts: list[int] = []
    a = 0
    while a < len(order):
        firsts.append(a)
        a = max(a + 1, int(np.searchsorted(cum, cum[a] + block_size - 4, side="right")) - 1)
    bounds = [*firsts, len(order)]
    block_bytes = np.array([4 + cum[b] - cum[a] for a, b in zip(bounds, bounds[1:], strict=False)], dtype=np.int64)
    block_offsets = np.cumsum(block_bytes) - block_bytes
    heads = _records(kind, dictionary, order[np.array(firsts, dtype=np.int64)], block_offsets)[0]
    out = bytearray(struct.pack(">i", len(firsts)))
    out += heads.tobytes()
    out += struct.pack(">i", int(block_bytes.sum()))
    raw = entries.tobytes()
    for a, b in zip(bounds, bounds[1:], strict=False):
        out += struct.pack(">i", b - a)
        out += raw[cum[a] : cum[b]]
    return bytes(out)


# ---------------------------------------------------------------- reader


class _Cursor:
    def __init__(self, data: bytes, pos: int, kind: str) -> None:
        self.data, self.pos, self.kind = data, pos, kind

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def key(self) -> int | bytes:
        if self.kind == "str":
            (length,) = self.unpack(">i")
            if length < 0 or self.pos + length > len(self.data):
                raise CorruptMetadataError(_SOURCE, f"value of {length} bytes at {self.pos}")
            value = self.data[self.pos : self.pos + length]
            self.pos += length
            return value
        (value,) = self.unpack(_STRUCT_CODES[self.kind])
        return int(value)


def _order_key(kind: str, key: int | bytes) -> int | bytes:
    """A key as a Python value ordered as Java's comparator orders the keys."""
    if kind in ("f4", "f8") and isinstance(key, int):
        return int(float_order(np.array([key], dtype=np.int32 if kind == "f4" else np.int64))[0])
    return key


class BitmapIndexReader(FileIndexReader):
    """Reads a bitmap index's head at once, V2's index blocks and the bitmaps when asked."""

    def __init__(self, data_type: DataType, data: bytes) -> None:
        kind = key_kind(data_type)
        if kind is None:
            raise UnsupportedTypeError(f"the bitmap file index does not support type {data_type}")
        self.data_type, self.kind, self.data = data_type, kind, bytes(data)
        try:
            self._read_head()
        except (struct.error, IndexError) as exc:
            raise CorruptMetadataError(_SOURCE, f"truncated head ({exc})") from exc
        self._blocks: dict[int, dict[int | bytes, int]] = {}

    def _read_head(self) -> None:
        if not self.data:
            raise CorruptMetadataError(_SOURCE, "empty")
        self.version = self.data[0]
        if self.version > VERSION_2:
            raise UnsupportedTableError(f"bitmap file index version {self.version} is newer than lakestore reads ({VERSION_2})")
        if self.version not in (VERSION_1, VERSION_2):
            raise CorruptMetadataError(_SOURCE, f"unknown version {self.version}")
        cur = _Cursor(self.data, 1, self.kind)
        self.rows, self.count, has_null = cur.unpack(">iib")
        if self.rows < 0 or self.count < 0:
            raise CorruptMetadataError(_SOURCE, f"{self.rows} rows, {self.count} values")
        self.null_offset: int | None = None
        if has_null:
            (self.null_offset,) = cur.unpack(">i")
            if self.version == VERSION_2:
                cur.unpack(">i")
        self.offsets: dict[int | bytes, int] = {}
        if self.version == VERSION_1:
            for _ in range(self.count):
                key = cur.key()
                (self.offsets[key],) = cur.unpack(">i")
            self.body_start = cur.pos
            return
        (nblocks,) = cur.unpack(">i")
        self.block_keys: list[int | bytes] = []
        self.block_offsets: list[int] = []
        for _ in range(nblocks):
            self.block_keys.append(_order_key(self.kind, cur.key()))
            self.block_offsets.append(cur.unpack(">i")[0])
        (body_offset,) = cur.unpack(">i")
        self.blocks_start = cur.pos
        self.body_start = cur.pos + body_offset

    def _block(self, index: int) -> dict[int | bytes, int]:
        if index not in self._blocks:
            cur = _Cursor(self.data, self.blocks_start + self.block_offsets[index], self.kind)
            entries: dict[int | bytes, int] = {}
            (count,) = cur.unpack(">i")
            for _ in range(count):
                key = cur.key()
                offset, _length = cur.unpack(">ii")
                entries[key] = offset
            self._blocks[index] = entries
        return self._blocks[index]

    def _offset(self, key: int | bytes) -> int | None:
        if self.version == VERSION_1:
            return self.offsets.get(key)
        wanted = _order_key(self.kind, key)
        # the last block whose first value is at most the key (Java's binary search)
        lo, hi = 0, len(self.block_keys)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.block_keys[mid] <= wanted:  # type: ignore[operator]
                lo = mid + 1
            else:
                hi = mid
        return None if lo == 0 else self._block(lo - 1).get(key)

    def _bitmap(self, offset: int | None) -> np.ndarray:
        if offset is None:
            return np.empty(0, dtype=np.uint32)
        if offset < 0:
            return np.array([-1 - offset], dtype=np.uint32)
        return read_bitmap(self.data, self.body_start + offset, source=_SOURCE)[0]

    def rows_of(self, values: Sequence[Any]) -> np.ndarray | None:
        """The rows holding any of ``values`` (None: null); None when a value is not one of the
        column's type."""
        parts = []
        try:
            for value in values:
                if value is None:
                    parts.append(self._bitmap(self.null_offset))
                    continue
                converted = literal_key(self.data_type, value)
                if converted is None:
                    return None
                key, exact = converted
                parts.append(self._bitmap(self._offset(key)) if exact else np.empty(0, np.uint32))
        except (struct.error, IndexError) as exc:
            raise CorruptMetadataError(_SOURCE, f"truncated ({exc})") from exc
        if not parts:
            return np.empty(0, dtype=np.uint32)
        return np.unique(np.concatenate(parts)).astype(np.uint32)

    def _result(self, rows: np.ndarray | None, *, negate: bool = False) -> FileIndexResult:
        if rows is None:
            return FileIndexResult(True)
        if negate:
            rows = np.setdiff1d(np.arange(self.rows, dtype=np.uint32), rows, assume_unique=True)
        return FileIndexResult(rows.size > 0, rows)

    def equal(self, value: Any) -> FileIndexResult:
        return self._result(self.rows_of([value]))

    def not_equal(self, value: Any) -> FileIndexResult:
        return self._result(self.rows_of([value]), negate=True)

    def is_in(self, values: Sequence[Any]) -> FileIndexResult:
        return self._result(self.rows_of(values))

    def not_in(self, values: Sequence[Any]) -> FileIndexResult:
        return self._result(self.rows_of(values), negate=True)

    def is_null(self) -> FileIndexResult:
        return self._result(self.rows_of([None]))

    def is_not_null(self) -> FileIndexResult:
        return self._result(self.rows_of([None]), negate=True)


class BitmapIndexType(FileIndexType):
    """The ``bitmap`` index type."""

    name = BITMAP_INDEX

    def supports(self, data_type: DataType) -> bool:
        return key_kind(data_type) is not None

    def writer(self, data_type: DataType, options: Mapping[str, str]) -> FileIndexWriter:
        """Raises ``UnsupportedTypeError`` for a type the index cannot key, ``OptionError`` for an
        invalid ``version`` or ``index-block-size``."""
        return BitmapIndexWriter(data_type, options)

    def reader(self, data_type: DataType, options: Mapping[str, str], data: bytes) -> FileIndexReader:
        """Raises ``CorruptMetadataError`` for bytes that are no bitmap index, and
        ``UnsupportedTableError`` for a version newer than 2."""
        return BitmapIndexReader(data_type, data)
