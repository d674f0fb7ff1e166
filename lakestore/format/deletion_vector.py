"""Paimon's deletion-vector index files (``index/index-<uuid>-<n>``, index type ``DELETION_VECTORS``).

Layout (``DeletionFileWriter``, version byte still 1 in Paimon 2.0): one version byte, then per data
file a big-endian int32 ``size``, ``size`` bytes of vector and a big-endian CRC32 of those bytes.
A vector is one of two kinds, told apart by its first four bytes:

- 32-bit (``BitmapDeletionVector``, the default): big-endian int32 magic number 1581511376, then a
  32-bit RoaringBitmap in the portable serialization (little-endian). The index manifest records
  its range as (offset of the ``size`` int, ``size``).
- 64-bit (``Bitmap64DeletionVector``, option ``deletion-vectors.bitmap64``, Paimon 1.2+, Iceberg's
  layout): little-endian int32 magic number 1681511377, then Iceberg's ``RoaringPositionBitmap``
  serialization: a little-endian int64 count of 32-bit bitmaps, then for each key (the high 32
  bits of the positions, 0, 1, ... up to the largest; keys without positions hold an empty
  bitmap) a little-endian uint32 key and that key's portable RoaringBitmap. The index manifest
  records its range as (offset of the ``size`` int, ``4 + size + 4``): size int and CRC included.

The 32-bit bitmaps are encoded and decoded by :mod:`lakestore.format.roaring` (byte for byte what
Paimon writes for both kinds).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from lakestore.errors import CorruptMetadataError
from lakestore.format.arrow_ops import sorted_unique
from lakestore.format.roaring import deserialize_bitmap, read_bitmap, serialize_bitmap

DELETION_VECTORS_INDEX = "DELETION_VECTORS"
VERSION_ID_V1 = 1
MAGIC_NUMBER = 1581511376  # 32-bit vectors, big-endian
MAGIC_NUMBER_64 = 1681511377  # 64-bit vectors, little-endian
MAX_POSITION = 2**31 - 1  # Paimon's RoaringBitmap32 limit
MAX_POSITION_64 = ((2**31 - 2) << 32) | 2**31  # OptimizedRoaringBitmap64.MAX_VALUE
_SIZE_AND_CRC = 8  # a 64-bit vector's recorded length counts its size int and CRC


@dataclass(frozen=True, slots=True)
class VectorRange:
    """Where one data file's vector lies in an index file: ``offset`` of its size int and
    ``length`` as the index manifest records it (the vector's bytes for a 32-bit vector, those
    plus the size int and CRC for a 64-bit one)."""

    data_file: str
    offset: int
    length: int
    cardinality: int
    bitmap64: bool = False


# ---------------------------------------------------------------- deletion vectors and index files


def serialize_vector(positions: np.ndarray, *, bitmap64: bool = False) -> bytes:
    """A vector's bytes (what its size int counts): a ``BitmapDeletionVector``'s magic number and
    bitmap, or with ``bitmap64`` a ``Bitmap64DeletionVector``'s magic number and 64-bit bitmap.
    ``positions`` are sorted and unique."""
    if not bitmap64:
        return struct.pack(">i", MAGIC_NUMBER) + serialize_bitmap(positions)
    values = np.asarray(positions, dtype=np.uint64)
    highs = (values >> np.uint64(32)).astype(np.int64)
    count = int(highs[-1]) + 1 if len(values) else 0
    # one bitmap per key from 0 to the largest, empty ones included (Java's dense bitmap array)
    bounds = np.searchsorted(highs, np.arange(count + 1))
    out = bytearray(struct.pack("<iq", MAGIC_NUMBER_64, count))
    for key in range(count):
        out += struct.pack("<I", key)
        out += serialize_bitmap((values[bounds[key] : bounds[key + 1]] & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    return bytes(out)


def is_bitmap64(data: bytes | memoryview) -> bool:
    """Whether a vector's bytes (from its magic number on) are a 64-bit vector."""
    return len(data) >= 4 and struct.unpack_from("<i", data, 0)[0] == MAGIC_NUMBER_64


def deserialize_vector(data: bytes | memoryview, *, source: str = "deletion vector") -> np.ndarray:
    """A vector's bytes (32-bit or 64-bit, by magic number) -> sorted positions: uint32, or uint64
    when a 64-bit vector holds a position beyond 32 bits."""
    buf = memoryview(data)
    if len(buf) >= 4 and struct.unpack_from(">i", buf, 0)[0] == MAGIC_NUMBER:
        return deserialize_bitmap(buf[4:], source=source)
    if not is_bitmap64(buf):
        raise CorruptMetadataError(source, "invalid deletion vector magic number")
    try:
        (count,) = struct.unpack_from("<q", buf, 4)
        if not 0 <= count <= 2**31 - 1:
            raise CorruptMetadataError(source, f"invalid 64-bit deletion vector bitmap count {count}")
        pos = 12
        parts: list[np.ndarray] = []
        last = -1
        for _ in range(count):
            (key,) = struct.unpack_from("<i", buf, pos)
            if not last < key <= 2**31 - 2:
                raise CorruptMetadataError(source, f"64-bit deletion vector keys out of order or range ({last}, {key})")
            last = key
            lows, used = read_bitmap(buf, pos + 4, source=source)
            pos += 4 + used
            if len(lows):
                parts.append(lows if key == 0 else (np.uint64(key) << np.uint64(32)) | lows.astype(np.uint64))
    except struct.error as exc:
        raise CorruptMetadataError(source, f"truncated 64-bit deletion vector ({exc})") from exc
    if pos != len(buf):
        raise CorruptMetadataError(source, f"64-bit deletion vector of {len(buf)} bytes holds {pos}")
    if not parts:
        return np.empty(0, dtype=np.uint32)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([p.astype(np.uint64) for p in parts])


def normalize_positions(positions: Iterable[int] | np.ndarray, *, bitmap64: bool = False) -> np.ndarray:
    """Any positions -> sorted unique positions (uint32, or uint64 beyond 32 bits), refusing what
    the vector kind cannot hold."""
    values = sorted_unique(np.asarray(positions, dtype=np.int64))
    limit = MAX_POSITION_64 if bitmap64 else MAX_POSITION
    if len(values) and (values[0] < 0 or values[-1] > limit):
        raise ValueError(f"deletion vector positions must be in [0, {limit}]")
    return values.astype(np.uint32 if not len(values) or values[-1] <= 0xFFFFFFFF else np.uint64)


def encode_index_file(
    vectors: Mapping[str, np.ndarray], *, bitmap64: bool = False, kinds: Mapping[str, bool] | None = None
) -> tuple[bytes, list[VectorRange]]:
    """Data file name -> deleted positions, into one index file's bytes and its ranges (in the
    mapping's order, as Java's LinkedHashMap keeps them). A vector is 64-bit when ``kinds`` says
    so for its data file (a vector keeps the kind it was read in, as Paimon's maintainer keeps a
    restored vector's class), else when ``bitmap64``."""
    out = bytearray([VERSION_ID_V1])
    ranges = []
    for data_file, positions in vectors.items():
        wide = kinds.get(data_file, bitmap64) if kinds is not None else bitmap64
        values = normalize_positions(positions, bitmap64=wide)
        data = serialize_vector(values, bitmap64=wide)
        length = len(data) + _SIZE_AND_CRC if wide else len(data)
        ranges.append(VectorRange(data_file, len(out), length, len(values), wide))
        out += struct.pack(">i", len(data))
        out += data
        out += struct.pack(">i", _signed32(zlib.crc32(data)))
    return bytes(out), ranges


def read_vector(data: bytes | memoryview, offset: int, length: int, *, source: str) -> tuple[np.ndarray, bool]:
    """One vector of an index file's bytes, checking its size and CRC: (positions, is 64-bit)."""
    buf = memoryview(data)
    if len(buf) < 1 or buf[0] != VERSION_ID_V1:
        raise CorruptMetadataError(source, f"unknown deletion vector index version {buf[0] if len(buf) else None}")
    if offset < 1 or offset + 8 > len(buf):
        raise CorruptMetadataError(source, f"deletion vector range ({offset}, {length}) beyond the file end")
    (size,) = struct.unpack_from(">i", buf, offset)
    wide = is_bitmap64(buf[offset + 4 : offset + 8])
    expected = length - _SIZE_AND_CRC if wide else length
    if size != expected:
        raise CorruptMetadataError(source, f"deletion vector size {size} at offset {offset}, manifest says {expected}")
    if offset + 8 + size > len(buf):
        raise CorruptMetadataError(source, f"deletion vector range ({offset}, {length}) beyond the file end")
    body = buf[offset + 4 : offset + 4 + size]
    (crc,) = struct.unpack_from(">i", buf, offset + 4 + size)
    if crc != _signed32(zlib.crc32(body)):
        raise CorruptMetadataError(source, f"deletion vector checksum mismatch at offset {offset}")
    return deserialize_vector(body, source=source), wide


def decode_vector(data: bytes | memoryview, offset: int, length: int, *, source: str) -> np.ndarray:
    """One vector of an index file's bytes (either kind), checking its size and CRC."""
    return read_vector(data, offset, length, source=source)[0]


def decode_index_file(data: bytes, ranges: Iterable[tuple[str, int, int]], *, source: str) -> dict[str, np.ndarray]:
    """All vectors of an index file: ``(data_file, offset, length)`` -> data file -> positions."""
    return {name: decode_vector(data, offset, length, source=source) for name, offset, length in ranges}


def deletion_mask(positions: np.ndarray, row_count: int) -> np.ndarray:
    """Positions -> boolean mask of ``row_count`` rows, True where the row is deleted."""
    mask = np.zeros(row_count, dtype=bool)
    if len(positions):
        if int(positions[-1]) >= row_count:
            raise CorruptMetadataError("deletion vector", f"position {int(positions[-1])} beyond the file's {row_count} rows")
        mask[positions] = True
    return mask


def _signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value
