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

The bitmaps are encoded and decoded with NumPy, one container (65536 positions) at a time. Writes
pick each container's representation as Java's ``RoaringBitmap.runOptimize`` does for a bitmap
built by adding positions (array up to 4096 values, else bitmap; then run-length when smaller),
which is what Paimon writes for both kinds, byte for byte. Reads accept array, bitmap and run
containers.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from lakestore.errors import CorruptMetadataError
from lakestore.format.arrow_ops import sorted_unique

DELETION_VECTORS_INDEX = "DELETION_VECTORS"
VERSION_ID_V1 = 1
MAGIC_NUMBER = 1581511376  # 32-bit vectors, big-endian
MAGIC_NUMBER_64 = 1681511377  # 64-bit vectors, little-endian
MAX_POSITION = 2**31 - 1  # Paimon's RoaringBitmap32 limit
MAX_POSITION_64 = ((2**31 - 2) << 32) | 2**31  # OptimizedRoaringBitmap64.MAX_VALUE
_SIZE_AND_CRC = 8  # a 64-bit vector's recorded length counts its size int and CRC

_SERIAL_COOKIE_NO_RUNCONTAINER = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX_SIZE = 4096
_BITMAP_BYTES = 8192


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


# ---------------------------------------------------------------- portable RoaringBitmap (32-bit)


def _runs(lows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique uint16 values -> (run starts, run lengths - 1)."""
    breaks = np.flatnonzero(np.diff(lows.astype(np.int32)) != 1) + 1
    starts_idx = np.concatenate(([0], breaks))
    ends_idx = np.concatenate((breaks - 1, [len(lows) - 1]))
    return lows[starts_idx], (lows[ends_idx].astype(np.int32) - lows[starts_idx].astype(np.int32))


def serialize_bitmap(positions: np.ndarray) -> bytes:
    """Sorted unique positions (< 2**31) -> RoaringBitmap portable bytes, as Java's
    ``RoaringBitmap32.serialize`` writes them (``runOptimize`` first)."""
    values = np.asarray(positions, dtype=np.uint32)
    highs = (values >> 16).astype(np.uint16)
    keys, starts = np.unique(highs, return_index=True)
    bounds = np.append(starts, len(values))
    kinds: list[str] = []
    bodies: list[bytes] = []
    cards: list[int] = []
    for i in range(len(keys)):
        lows = (values[bounds[i] : bounds[i + 1]] & 0xFFFF).astype(np.uint16)
        card = len(lows)
        run_starts, run_lengths = _runs(lows)
        run_size = 2 + 4 * len(run_starts)
        # Java's runOptimize: a run container when strictly smaller than the array or bitmap
        smaller = run_size < 2 * card if card <= _ARRAY_MAX_SIZE else run_size < _BITMAP_BYTES
        kind = "run" if smaller else ("array" if card <= _ARRAY_MAX_SIZE else "bitmap")
        if kind == "array":
            body = lows.astype("<u2").tobytes()
        elif kind == "bitmap":
            bits = np.zeros(65536, dtype=bool)
            bits[lows] = True
            body = np.packbits(bits, bitorder="little").tobytes()
        else:
            pairs = np.empty(2 * len(run_starts), dtype="<u2")
            pairs[0::2] = run_starts
            pairs[1::2] = run_lengths
            body = struct.pack("<H", len(run_starts)) + pairs.tobytes()
        kinds.append(kind)
        bodies.append(body)
        cards.append(card)
    size = len(keys)
    has_run = "run" in kinds
    out = bytearray()
    if has_run:
        out += struct.pack("<I", _SERIAL_COOKIE | ((size - 1) << 16))
        flags = np.packbits(np.array([k == "run" for k in kinds], dtype=bool), bitorder="little")
        out += flags.tobytes()
    else:
        out += struct.pack("<II", _SERIAL_COOKIE_NO_RUNCONTAINER, size)
    header = np.empty(2 * size, dtype="<u2")
    header[0::2] = keys
    header[1::2] = np.asarray(cards, dtype=np.int64) - 1
    out += header.tobytes()
    if not has_run or size >= _NO_OFFSET_THRESHOLD:
        offset = len(out) + 4 * size
        offsets = []
        for body in bodies:
            offsets.append(offset)
            offset += len(body)
        out += np.asarray(offsets, dtype="<u4").tobytes()
    for body in bodies:
        out += body
    return bytes(out)


def deserialize_bitmap(data: bytes | memoryview, *, source: str = "deletion vector") -> np.ndarray:
    """RoaringBitmap portable bytes -> sorted uint32 positions."""
    return _deserialize_bitmap(memoryview(data), source=source)[0]


def _deserialize_bitmap(buf: memoryview, *, source: str) -> tuple[np.ndarray, int]:
    """The portable RoaringBitmap at the start of ``buf``: (sorted uint32 positions, its size in bytes)."""
    try:
        (cookie,) = struct.unpack_from("<I", buf, 0)
        pos = 4
        run_flags: np.ndarray | None = None
        if cookie & 0xFFFF == _SERIAL_COOKIE:
            size = (cookie >> 16) + 1
            nbytes = (size + 7) // 8
            run_flags = np.unpackbits(np.frombuffer(buf, np.uint8, nbytes, pos), bitorder="little")[:size].astype(bool)
            pos += nbytes
        elif cookie == _SERIAL_COOKIE_NO_RUNCONTAINER:
            (size,) = struct.unpack_from("<I", buf, pos)
            pos += 4
        else:
            raise CorruptMetadataError(source, f"not a portable RoaringBitmap (cookie {cookie})")
        header = np.frombuffer(buf, "<u2", 2 * size, pos).astype(np.uint32)
        pos += 4 * size
        keys, cards = header[0::2], header[1::2] + 1
        if run_flags is None or size >= _NO_OFFSET_THRESHOLD:
            pos += 4 * size  # offsets: containers follow each other, no need to seek
        parts = []
        for i in range(size):
            if run_flags is not None and run_flags[i]:
                (nruns,) = struct.unpack_from("<H", buf, pos)
                pairs = np.frombuffer(buf, "<u2", 2 * nruns, pos + 2).astype(np.int64)
                pos += 2 + 4 * nruns
                starts, lengths = pairs[0::2], pairs[1::2] + 1
                # arange per run without a Python loop: offsets within each run added to its start
                total = int(lengths.sum())
                run_of = np.repeat(np.arange(nruns), lengths)
                within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
                lows = starts[run_of] + within
            elif cards[i] <= _ARRAY_MAX_SIZE:
                lows = np.frombuffer(buf, "<u2", int(cards[i]), pos)
                pos += 2 * int(cards[i])
            else:
                bits = np.unpackbits(np.frombuffer(buf, np.uint8, _BITMAP_BYTES, pos), bitorder="little")
                lows = np.flatnonzero(bits)
                pos += _BITMAP_BYTES
            parts.append((np.uint32(keys[i]) << np.uint32(16)) | lows.astype(np.uint32))
    except (struct.error, ValueError) as exc:
        raise CorruptMetadataError(source, f"truncated RoaringBitmap ({exc})") from exc
    if not parts:
        return np.empty(0, dtype=np.uint32), pos
    return np.concatenate(parts), pos


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
            lows, used = _deserialize_bitmap(buf[pos + 4 :], source=source)
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
