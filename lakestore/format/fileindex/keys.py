"""Column values as Paimon's bitmap and bsi file indexes key them, vectorised, and Java's hash
codes of those keys.

Both indexes map a row's value to a Java object first (``BitmapFileIndex.getValueMapper``,
``BitSliceIndexBitmapFileIndex.getValueMapper``): TINYINT, SMALLINT, INT, BIGINT their value;
DATE its days since the epoch and TIME its milliseconds of the day (ints); TIMESTAMP and
TIMESTAMP_LTZ their epoch milliseconds (precision up to 3) or microseconds (a long); FLOAT and
DOUBLE their value (kept here as their IEEE bits with NaN canonical, as Java's ``equals``,
``hashCode`` and ``DataOutput`` see them); BOOLEAN; CHAR and VARCHAR their UTF-8 bytes.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.format.types import DataType

INT_ROOTS = {"TINYINT": "i1", "SMALLINT": "i2", "INT": "i4", "DATE": "i4", "TIME": "i4", "BIGINT": "i8"}
TIMESTAMP_ROOTS = ("TIMESTAMP", "TIMESTAMP_LTZ")
STRING_ROOTS = ("CHAR", "VARCHAR")
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_CANONICAL_NAN32 = 0x7FC00000
_CANONICAL_NAN64 = 0x7FF8000000000000
_NANOS_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def key_kind(data_type: DataType) -> str | None:
    """The NumPy code of a type's key (``i1``, ``i2``, ``i4``, ``i8``; ``f4``/``f8`` for float
    bits held as ``i4``/``i8``; ``b1`` for BOOLEAN), ``str`` for strings, None when the bitmap
    index cannot key the type."""
    root = data_type.root
    if root in INT_ROOTS:
        return INT_ROOTS[root]
    if root in TIMESTAMP_ROOTS:
        return "i8"
    if root == "FLOAT":
        return "f4"
    if root == "DOUBLE":
        return "f8"
    if root == "BOOLEAN":
        return "b1"
    if root in STRING_ROOTS:
        return "str"
    return None


def timestamp_unit_nanos(data_type: DataType) -> int:
    """Nanoseconds per unit of a timestamp's key: milliseconds up to precision 3, else micros."""
    return 1_000_000 if (data_type.precision if data_type.precision is not None else 6) <= 3 else 1_000


def key_array(data_type: DataType, values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column's values as index keys: an integer Arrow array (the kind's width; float bits,
    booleans 0/1) or a binary array of UTF-8 strings; nulls stay null."""
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    kind = key_kind(data_type)
    t = arr.type
    if kind == "str":
        return arr.cast(pa.large_binary())
    if kind == "b1":
        return arr.cast(pa.int8())
    if kind in ("f4", "f8"):
        width, nan = (np.int32, _CANONICAL_NAN32) if kind == "f4" else (np.int64, _CANONICAL_NAN64)
        floats = np.asarray(arr.cast(pa.float32() if kind == "f4" else pa.float64()).fill_null(0).to_numpy(zero_copy_only=False))
        bits = floats.view(width).copy()
        bits[np.isnan(floats)] = nan
        return pa.array(bits, mask=_null_mask(arr))
    if data_type.root in TIMESTAMP_ROOTS:
        unit = t.unit if pa.types.is_timestamp(t) else "us"
        raw = np.asarray(arr.cast(pa.timestamp(unit)).cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False))
        nanos = _NANOS_PER_UNIT[unit]
        target = timestamp_unit_nanos(data_type)
        keys = raw * (nanos // target) if nanos >= target else np.floor_divide(raw, target // nanos)
        return pa.array(keys, mask=_null_mask(arr))
    if data_type.root == "DATE":
        return arr.cast(pa.int32()) if not pa.types.is_date64(t) else pc.divide(arr.cast(pa.int64()), 86_400_000).cast(pa.int32())
    if data_type.root == "TIME":
        if pa.types.is_time64(t):
            raw = np.asarray(arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False))
            per_ms = 1_000 if t.unit == "us" else 1_000_000
            return pa.array(np.floor_divide(raw, per_ms).astype(np.int32), mask=_null_mask(arr))
        if pa.types.is_time32(t) and t.unit == "s":
            return pc.multiply(arr.cast(pa.int32()), 1000)
        return arr.cast(pa.int32())
    assert kind is not None
    return arr.cast(pa.from_numpy_dtype(np.dtype(kind)))


def _null_mask(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return np.asarray(arr.is_null().to_numpy(zero_copy_only=False))


# ---------------------------------------------------------------- literals


def literal_key(data_type: DataType, value: Any) -> tuple[int | bytes, bool] | None:
    """A predicate literal as the index's key: (key, exact). ``exact`` False when the literal lies
    between two keys (a timestamp finer than the key's unit; the key is then the floor). None when
    the literal is not a value of the type."""
    root = data_type.root
    try:
        if root in STRING_ROOTS:
            if isinstance(value, str):
                return value.encode("utf-8"), True
            if isinstance(value, bytes):
                return value, True
            return None
        if root == "BOOLEAN":
            return (1 if bool(value) else 0), True
        if root == "FLOAT":
            bits = struct.unpack("<i", struct.pack("<f", float(value)))[0]
            return (_CANONICAL_NAN32 if math.isnan(float(value)) else bits), True
        if root == "DOUBLE":
            bits = struct.unpack("<q", struct.pack("<d", float(value)))[0]
            return (_CANONICAL_NAN64 if math.isnan(float(value)) else bits), True
        if root == "DATE" and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            return (value - _EPOCH_DATE).days, True
        if root == "TIME" and isinstance(value, datetime.time):
            micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
            return micros // 1000, micros % 1000 == 0
        if root in TIMESTAMP_ROOTS and isinstance(value, datetime.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(datetime.UTC).replace(tzinfo=None)
            micros = (value - _EPOCH) // datetime.timedelta(microseconds=1)
            per_key = timestamp_unit_nanos(data_type) // 1000
            return micros // per_key, micros % per_key == 0
        if root == "DECIMAL":
            scaled = decimal.Decimal(value).scaleb(data_type.scale or 0)
            floor = int(scaled.to_integral_value(rounding=decimal.ROUND_FLOOR))
            return floor, scaled == floor
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value), True
        if isinstance(value, decimal.Decimal) and value == value.to_integral_value():
            return int(value), True
    except (TypeError, ValueError, OverflowError, struct.error, decimal.InvalidOperation):
        return None
    return None


# ---------------------------------------------------------------- Java's view of the keys


def float_order(bits: np.ndarray) -> np.ndarray:
    """Float or double bits (int32 / int64) -> int64 ordered as ``Float.compare`` /
    ``Double.compare`` (-0.0 below 0.0, NaN above everything)."""
    width = 31 if bits.dtype.itemsize == 4 else 63
    wide = bits.astype(np.int64)
    return np.where(wide < 0, wide ^ ((1 << width) - 1), wide)


def comparable_keys(kind: str, keys: pa.Array) -> list[Any]:
    """The keys as Python values ordered as Java's ``compareTo`` orders them (numbers by value,
    floats as ``Float.compare``, booleans false first, strings by unsigned bytes)."""
    if kind == "str":
        return list(keys.cast(pa.large_binary()).to_pylist())
    values = np.asarray(keys.to_numpy(zero_copy_only=False))
    if kind in ("f4", "f8"):
        values = float_order(values)
    return list(values.astype(np.int64).tolist())


def java_hashes(kind: str, keys: pa.Array) -> np.ndarray:
    """Java's ``hashCode()`` of each key's boxed object (Byte/Short/Integer: the value; Long and
    Double: ``(int) (bits ^ bits >>> 32)``; Float: its bits; Boolean: 1231 / 1237; BinaryString:
    MurmurHash3 of its UTF-8 bytes, seed 42), as uint32."""
    if kind == "str":
        return _murmur_strings(keys)
    values = np.asarray(keys.to_numpy(zero_copy_only=False))
    if kind == "b1":
        return np.where(values != 0, 1231, 1237).astype(np.uint32)
    if kind in ("i8", "f8"):
        bits = values.astype(np.int64).view(np.uint64)
        return ((bits ^ (bits >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return values.astype(np.int32).view(np.uint32)


_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    k = k * _C1
    k = _rotl(k, 15)
    k = k * _C2
    h = h ^ k
    h = _rotl(h, 13)
    return h * np.uint32(5) + np.uint32(0xE6546B64)


def _murmur_strings(keys: pa.Array) -> np.ndarray:
    """``MurmurHashUtils.hashBytes`` (Paimon's BinaryString.hashCode) of each binary value: little-
    endian 4-byte words, then the tail bytes one by one (sign-extended), then fmix with the length.
    Vectorised: strings sorted by length, each word position over the strings that have it."""
    arr = keys.cast(pa.large_binary())
    n = len(arr)
    if n == 0:
        return np.empty(0, dtype=np.uint32)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=n + 1, offset=arr.offset * 8)
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    order = np.argsort(-lengths, kind="stable")
    s_starts, s_lengths = starts[order], lengths[order]
    words = s_lengths // 4
    h = np.full(n, 42, dtype=np.uint32)
    with np.errstate(over="ignore"):
        max_words = int(words[0]) if n else 0
        active = n
        for w in range(max_words):
            while active and words[active - 1] <= w:
                active -= 1
            base = s_starts[:active] + 4 * w
            k = (
                data[base].astype(np.uint32)
                | (data[base + 1].astype(np.uint32) << np.uint32(8))
                | (data[base + 2].astype(np.uint32) << np.uint32(16))
                | (data[base + 3].astype(np.uint32) << np.uint32(24))
            )
            h[:active] = _mix(h[:active], k)
        for t in range(3):
            sel = np.flatnonzero(words * 4 + t < s_lengths)
            if sel.size:
                byte = data[s_starts[sel] + words[sel] * 4 + t].astype(np.int8).astype(np.int32).view(np.uint32)
                h[sel] = _mix(h[sel], byte)
        h ^= s_lengths.astype(np.uint32)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    out = np.empty(n, dtype=np.uint32)
    out[order] = h
    return out
