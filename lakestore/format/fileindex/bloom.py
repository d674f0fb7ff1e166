"""Paimon's ``bloom-filter`` file index (``BloomFilterFileIndex``): a ``BloomFilter64`` over the
64-bit ``FastHash`` of each non-null value, hashed a whole Arrow array at a time with NumPy.

``FastHash`` per type, as Java: integers, DATE, TIME and the bits of FLOAT/DOUBLE
(``floatToIntBits`` / ``doubleToLongBits``, NaN canonical) through Thomas Wang's 64-bit integer
hash; TIMESTAMP(p <= 3) by its epoch milliseconds, TIMESTAMP(p > 3) by its epoch microseconds;
CHAR/VARCHAR (UTF-8 bytes) and BINARY/VARBINARY through XXH64 with seed 0
(``LongHashFunction.xx()``). BOOLEAN, DECIMAL and nested types have no hash (Java refuses them).

Serialized: the number of hash functions (4 bytes, big-endian), then the bit set (bit ``i`` is
bit ``i % 8`` of byte ``i // 8``). Options ``items`` (default 1,000,000) and ``fpp`` (0.1).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.errors import CorruptMetadataError, OptionError
from lakestore.format.fileindex.base import REMAIN, SKIP, FileIndexReader, FileIndexResult, FileIndexType, FileIndexWriter
from lakestore.format.types import DataType

NAME = "bloom-filter"
DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1

_INT_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME")
_U64 = np.uint64
_P1 = _U64(0x9E3779B185EBCA87)
_P2 = _U64(0xC2B2AE3D27D4EB4F)
_P3 = _U64(0x165667B19E3779F9)
_P4 = _U64(0x85EBCA77C2B2AE63)
_P5 = _U64(0x27D4EB2F165667C5)


def long_hash(keys: np.ndarray) -> np.ndarray:
    """Thomas Wang's 64-bit integer hash as Paimon's ``FastHash.getLongHash`` computes it (Java
    ``long`` arithmetic: wrap-around, arithmetic right shifts) over an int64 array."""
    key = keys.astype(np.int64, copy=True)
    with np.errstate(over="ignore"):
        key = (~key) + (key << 21)
        key = key ^ (key >> 24)
        key = (key + (key << 3)) + (key << 8)
        key = key ^ (key >> 14)
        key = (key + (key << 2)) + (key << 4)
        key = key ^ (key >> 28)
        key = key + (key << 31)
    return key


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U64(r)) | (x >> _U64(64 - r))


def _round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    return _rotl(acc + lane * _P2, 31) * _P1


def xxh64(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """XXH64 (seed 0) of each value of a binary array given as its bytes (uint8) and its
    ``n + 1`` offsets; as a signed int64 array (Java's ``long``)."""
    starts = offsets[:-1].astype(np.int64)
    lengths = (offsets[1:] - offsets[:-1]).astype(np.int64)
    n = lengths.size
    raw = np.asarray(data, dtype=np.uint8)
    buf = np.zeros((raw.size // 8 + 2) * 8, dtype=np.uint8)  # padded: reads past the end see zeros
    buf[: raw.size] = raw
    words = buf.view("<u8")

    def read64(pos: np.ndarray) -> np.ndarray:
        """The little-endian 8 bytes at each byte offset: two aligned words, shifted together."""
        index = pos >> 3
        shift = ((pos & 7) * 8).astype(np.uint64)
        low, high = words[index], words[index + 1]
        joined = (low >> shift) | (high << (_U64(64) - shift) % _U64(64))
        return np.where(shift == 0, low, joined)

    def read32(pos: np.ndarray) -> np.ndarray:
        return read64(pos) & _U64(0xFFFFFFFF)

    h = np.full(n, _P5, dtype=np.uint64)
    stripes = lengths // 32
    pos = starts.copy()
    with np.errstate(over="ignore"):
        long_rows = np.flatnonzero(stripes > 0)
        if long_rows.size:
            zero = _U64(0)
            v1 = np.full(long_rows.size, _P1 + _P2, dtype=np.uint64)
            v2 = np.full(long_rows.size, _P2, dtype=np.uint64)
            v3 = np.zeros(long_rows.size, dtype=np.uint64)
            v4 = np.full(long_rows.size, zero - _P1, dtype=np.uint64)
            # longest first: the values still striping at step s are a prefix
            long_rows = long_rows[np.argsort(-stripes[long_rows], kind="stable")]
            mine = stripes[long_rows]
            p = starts[long_rows]
            descending = -mine  # ascending: the values with more than s stripes come before -s
            for s in range(int(mine[0])):
                n_live = int(np.searchsorted(descending, -s, side="left"))
                q = p[:n_live] + 32 * s
                v1[:n_live] = _round(v1[:n_live], read64(q))
                v2[:n_live] = _round(v2[:n_live], read64(q + 8))
                v3[:n_live] = _round(v3[:n_live], read64(q + 16))
                v4[:n_live] = _round(v4[:n_live], read64(q + 24))
            acc = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
            for v in (v1, v2, v3, v4):
                acc = (acc ^ _round(np.zeros_like(v), v)) * _P1 + _P4
            h[long_rows] = acc
            pos[long_rows] += 32 * mine
        h = h + lengths.astype(np.uint64)
        remaining = lengths - 32 * stripes
        for _ in range(3):
            rows = np.flatnonzero(remaining >= 8)
            if rows.size == 0:
                break
            k1 = _round(np.zeros(rows.size, np.uint64), read64(pos[rows]))
            h[rows] = _rotl(h[rows] ^ k1, 27) * _P1 + _P4
            pos[rows] += 8
            remaining[rows] -= 8
        rows = np.flatnonzero(remaining >= 4)
        if rows.size:
            h[rows] = _rotl(h[rows] ^ (read32(pos[rows]) * _P1), 23) * _P2 + _P3
            pos[rows] += 4
            remaining[rows] -= 4
        for _ in range(3):
            rows = np.flatnonzero(remaining > 0)
            if rows.size == 0:
                break
            h[rows] = _rotl(h[rows] ^ (buf[pos[rows]].astype(np.uint64) * _P5), 11) * _P1
            pos[rows] += 1
            remaining[rows] -= 1
        h = h ^ (h >> _U64(33))
        h = h * _P2
        h = h ^ (h >> _U64(29))
        h = h * _P3
        h = h ^ (h >> _U64(32))
    return h.view(np.int64)


def supports(data_type: DataType) -> bool:
    """Whether Paimon's ``FastHash`` hashes values of this type."""
    return (
        data_type.root in _INT_ROOTS
        or data_type.root in ("FLOAT", "DOUBLE")
        or data_type.is_timestamp
        or (data_type.is_string or data_type.is_binary)
    )


def fast_hash(values: pa.Array, data_type: DataType) -> np.ndarray:
    """Paimon's ``FastHash`` of each non-null value of ``values`` (a column of ``data_type``), in
    order, nulls dropped; int64. Raises ``ValueError`` for a type Java does not hash (check
    :func:`supports` first)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.null_count:
        values = values.drop_null()
    root = data_type.root
    if data_type.is_string or data_type.is_binary:
        arr = values.cast(pa.large_binary())
        buffers = arr.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int64, count=len(arr) + 1, offset=arr.offset * 8)
        data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
        return xxh64(data, offsets)
    if root in _INT_ROOTS:
        if root == "DATE":
            ints = values.cast(pa.int32())
        elif root == "TIME":
            ints = values.cast(pa.time32("ms")).cast(pa.int32())
        else:
            ints = values
        return long_hash(ints.to_numpy(zero_copy_only=False))
    if root == "FLOAT":
        floats = np.asarray(values.cast(pa.float32()).to_numpy(zero_copy_only=False), dtype=np.float32)
        bits = floats.view(np.int32).copy()
        bits[np.isnan(floats)] = 0x7FC00000
        return long_hash(bits.astype(np.int64))
    if root == "DOUBLE":
        doubles = np.asarray(values.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        lbits = doubles.view(np.int64).copy()
        lbits[np.isnan(doubles)] = 0x7FF8000000000000
        return long_hash(lbits)
    if data_type.is_timestamp:
        unit = "ms" if (data_type.precision or 0) <= 3 else "us"
        ts = values.cast(pa.int64()).to_numpy(zero_copy_only=False)
        per = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}
        have, want = per[values.type.unit], per[unit]
        ticks = ts * (want // have) if want >= have else np.floor_divide(ts, have // want)
        return long_hash(ticks)
    raise ValueError(f"Paimon's bloom-filter index does not hash {data_type}")


class BloomFilter64:
    """Paimon's ``BloomFilter64``: ``k`` bit positions per 64-bit hash (``h1 + i * h2``, 32-bit)."""

    def __init__(self, num_hash_functions: int, bits: np.ndarray) -> None:
        """``bits``: one bool per bit (a filter being built), or the serialized bit set as
        ``uint8`` (a filter read back: tested without unpacking)."""
        self.num_hash_functions = num_hash_functions
        self.bits = bits
        self.num_bits = int(bits.size) if bits.dtype == np.bool_ else int(bits.size) * 8

    @classmethod
    def sized(cls, items: int, fpp: float) -> BloomFilter64:
        nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
        num_bits = nb + (8 - nb % 8)
        k = max(1, _java_round(num_bits / items * math.log(2)))
        return cls(k, np.zeros(num_bits, dtype=bool))

    def positions(self, hashes: np.ndarray) -> np.ndarray:
        """Bit positions, shape (k, n), of int64 ``hashes``."""
        h = hashes.astype(np.int64)
        h1 = h.astype(np.int32)  # the low 32 bits (wrap)
        h2 = (h.view(np.uint64) >> _U64(32)).astype(np.uint32).view(np.int32)
        i = np.arange(1, self.num_hash_functions + 1, dtype=np.int32)[:, None]
        with np.errstate(over="ignore"):
            combined = h1[None, :] + i * h2[None, :]
        combined = np.where(combined < 0, ~combined, combined)
        return combined.astype(np.int64) % self.num_bits

    def add_hashes(self, hashes: np.ndarray) -> None:
        if hashes.size:
            if self.bits.dtype != np.bool_:
                self.bits = np.unpackbits(self.bits, bitorder="little").astype(bool)
            self.bits[self.positions(hashes).reshape(-1)] = True

    def test_hashes(self, hashes: np.ndarray) -> np.ndarray:
        """Per hash: whether every bit of it is set (the value may be present)."""
        pos = self.positions(hashes)
        if self.bits.dtype == np.bool_:
            return np.all(self.bits[pos], axis=0)
        return np.all((self.bits[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1, axis=0)

    def to_bytes(self) -> bytes:
        packed = np.packbits(self.bits, bitorder="little") if self.bits.dtype == np.bool_ else self.bits
        return struct.pack(">i", self.num_hash_functions) + packed.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str = "bloom-filter index") -> BloomFilter64:
        """Raises ``CorruptMetadataError`` for bytes too short or without a hash function."""
        if len(data) < 5:
            raise CorruptMetadataError(source, f"a bloom-filter index of {len(data)} bytes")
        b = data[:4]
        # Java adds the signed bytes (``(b[0] << 24) + (b[1] << 16) + ...``)
        k = sum(((x - 256 if x >= 128 else x) << s) for x, s in zip(b, (24, 16, 8, 0), strict=True))
        if k <= 0:
            raise CorruptMetadataError(source, f"a bloom-filter index with {k} hash functions")
        return cls(k, np.frombuffer(data, dtype=np.uint8, offset=4))


def _java_round(x: float) -> int:
    return math.floor(x + 0.5)


def _options(options: Mapping[str, str]) -> tuple[int, float]:
    try:
        items = int(str(options.get("items", DEFAULT_ITEMS)).strip())
        fpp = float(str(options.get("fpp", DEFAULT_FPP)).strip())
    except ValueError as exc:
        raise OptionError(f"bloom-filter index options items= and fpp= must be numbers: {exc}") from exc
    if items <= 0 or not 0.0 < fpp < 1.0:
        raise OptionError(f"bloom-filter index: items must be > 0 and 0 < fpp < 1 (got items={items}, fpp={fpp})")
    return items, fpp


class BloomFilterWriter(FileIndexWriter):
    def __init__(self, data_type: DataType, items: int, fpp: float) -> None:
        self.data_type = data_type
        self.filter = BloomFilter64.sized(items, fpp)

    def add(self, values: pa.Array) -> None:
        self.filter.add_hashes(fast_hash(values, self.data_type))

    def to_bytes(self) -> bytes:
        return self.filter.to_bytes()


class BloomFilterReader(FileIndexReader):
    """Answers ``=`` and ``IN`` (a value whose bits are not all set is not in the file)."""

    def __init__(self, data_type: DataType, data: bytes) -> None:
        self.data_type = data_type
        self.filter = BloomFilter64.from_bytes(data)
        self._arrow = data_type.to_arrow()

    def _may_contain(self, values: list[Any]) -> bool:
        present = [v for v in values if v is not None]
        if len(present) < len(values):
            return True  # Java: a null literal keeps the file
        try:
            hashes = fast_hash(pa.array(present, type=self._arrow), self.data_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            return True  # a literal of another type: the index does not know
        return bool(np.any(self.filter.test_hashes(hashes)))

    def equal(self, value: Any) -> FileIndexResult:
        return REMAIN if self._may_contain([value]) else SKIP

    def is_in(self, values: Any) -> FileIndexResult:
        values = list(values)
        return REMAIN if not values or self._may_contain(values) else SKIP


class BloomFilterIndexType(FileIndexType):
    name = NAME

    def supports(self, data_type: DataType) -> bool:
        return supports(data_type)

    def writer(self, data_type: DataType, options: Mapping[str, str]) -> FileIndexWriter:
        """Raises ``OptionError`` for bad ``items`` / ``fpp``."""
        items, fpp = _options(options)
        return BloomFilterWriter(data_type, items, fpp)

    def reader(self, data_type: DataType, options: Mapping[str, str], data: bytes) -> FileIndexReader:
        return BloomFilterReader(data_type, data)


BLOOM_FILTER = BloomFilterIndexType()
