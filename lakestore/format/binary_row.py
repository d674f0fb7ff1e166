"""Paimon's BinaryRow, encoded column-wise with NumPy.

A BinaryRow is a header (row kind + null bits), one 8-byte little-endian slot per field and a
variable part for values that do not fit a slot. Rows are built for whole Arrow columns at once
(``encode_rows``) so that bucket hashing of millions of keys never loops per row in Python; the
same encoder serves partitions, min/max keys and statistics (n = 1 or 2), so there is one
definition of the byte layout. ``decode_row`` is the per-row inverse for metadata.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.errors import CorruptMetadataError, UnsupportedTypeError
from lakestore.format.arrow_ops import as_numpy, from_pylist
from lakestore.format.types import DataType

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_UNIT_PER_MS = {"s": 0, "ms": 1, "us": 1_000, "ns": 1_000_000}
_NANOS_PER_UNIT = {"s": 0, "ms": 1_000_000, "us": 1_000, "ns": 1}
_EXACT = decimal.Context(prec=80)


def header_size(arity: int) -> int:
    return ((arity + 63 + 8) // 64) * 8


@dataclass(frozen=True, slots=True)
class _Column:
    """One field's contribution: its fixed slots and, for some rows, bytes in the variable part."""

    slot: np.ndarray  # uint64 per row; for rows in the variable part the low 32 bits only
    null: np.ndarray  # bool per row
    in_var: np.ndarray  # bool per row: value lives in the variable part
    var_bytes: np.ndarray  # uint8, the variable-part bytes of the in_var rows, concatenated
    var_len: np.ndarray  # int64 per in_var row: bytes written
    var_reserved: np.ndarray  # int64 per in_var row: bytes reserved (8-byte aligned)


@dataclass(frozen=True, slots=True)
class BinaryRows:
    """n encoded rows: ``data[i, :sizes[i]]`` are row i's bytes (without the arity prefix)."""

    arity: int
    data: np.ndarray  # uint8 (n, width)
    sizes: np.ndarray  # int64 (n,)

    def __len__(self) -> int:
        return int(self.sizes.shape[0])

    def row(self, i: int) -> bytes:
        """Row i serialized as Paimon stores it: 4-byte big-endian arity, then the row."""
        return struct.pack(">i", self.arity) + self.data[i, : self.sizes[i]].tobytes()

    def words(self) -> np.ndarray:
        return self.data.view("<u4")


def _empty(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.int64)


def _null_mask(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=bool)
    return as_numpy(arr.is_null())


def _fixed(slot: np.ndarray, null: np.ndarray) -> _Column:
    slot = np.where(null, np.uint64(0), slot.astype(np.uint64, copy=False))
    n = len(slot)
    return _Column(slot, null, np.zeros(n, bool), np.zeros(0, np.uint8), _empty(0), _empty(0))


def _ints(arr: pa.Array, numpy_type: str, unsigned: str) -> np.ndarray:
    values = as_numpy(arr).astype(numpy_type, copy=False)  # slots of nulls are zeroed by _fixed
    return values.view(unsigned).astype(np.uint64)


def _string_column(arr: pa.Array, null: np.ndarray) -> _Column:
    arr = arr.cast(pa.binary()) if not pa.types.is_binary(arr.type) else arr
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data_buffer = arr.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    lengths = np.where(null, 0, offsets[1:] - offsets[:-1])
    starts = offsets[:-1]
    inline = (lengths <= 7) & ~null
    # Inline: bytes 0..6 hold the data, byte 7 is 0x80 | length.
    small = np.zeros((n, 8), dtype=np.uint8)
    if data.size:
        k = np.arange(7)
        idx = np.clip(starts[:, None] + k[None, :], 0, data.size - 1)
        mask = (k[None, :] < lengths[:, None]) & inline[:, None]
        small[:, :7] = np.where(mask, data[idx], 0)
    small[:, 7] = np.where(inline, 0x80 | lengths, 0).astype(np.uint8)
    slot = small.view("<u8").ravel().copy()
    in_var = (lengths > 7) & ~null
    var_rows = np.flatnonzero(in_var)
    var_len = lengths[var_rows]
    within = np.arange(int(var_len.sum())) - np.repeat(np.cumsum(var_len) - var_len, var_len)
    var_bytes = data[np.repeat(starts[var_rows], var_len) + within] if var_rows.size else np.zeros(0, np.uint8)
    slot = np.where(in_var, lengths.astype(np.uint64), slot)
    reserved = (var_len + 7) // 8 * 8
    return _Column(slot, null, in_var, var_bytes, var_len, reserved)


def _decimal_unscaled(arr: pa.Array) -> np.ndarray:
    """(n, 16) little-endian two's complement unscaled values of a decimal128 array."""
    arr = arr.cast(pa.decimal128(arr.type.precision, arr.type.scale))
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    return raw[arr.offset * 16 : (arr.offset + len(arr)) * 16].reshape(len(arr), 16)


def _wide_decimal_column(arr: pa.Array, null: np.ndarray) -> _Column:
    n = len(arr)
    big_endian = _decimal_unscaled(arr)[:, ::-1]
    # Java's BigInteger.toByteArray: drop leading sign-extension bytes, keep at least one.
    lead, nxt = big_endian[:, :-1], big_endian[:, 1:]
    redundant = ((lead == 0x00) & (nxt < 0x80)) | ((lead == 0xFF) & (nxt >= 0x80))
    strip = np.cumprod(redundant, axis=1).sum(axis=1)
    lengths = np.where(null, 0, 16 - strip)
    rows = np.arange(n)
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    var_bytes = big_endian[np.repeat(rows, lengths), np.repeat(strip, lengths) + within]
    # Null wide decimals still reserve their 16 bytes, as Java's writer does.
    return _Column(
        lengths.astype(np.uint64), null, np.ones(n, bool), var_bytes.astype(np.uint8), lengths.astype(np.int64), np.full(n, 16, np.int64)
    )


def _timestamp_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    unit = arr.type.unit
    values = as_numpy(arr.cast(pa.int64()))  # callers zero the slots of nulls
    if unit == "s":
        return values * 1000, np.zeros_like(values)
    per_ms = _UNIT_PER_MS[unit]
    millis = np.floor_divide(values, per_ms)
    nanos = (values - millis * per_ms) * _NANOS_PER_UNIT[unit]
    return millis, nanos


def _column(dtype: DataType, arr: pa.Array) -> _Column:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    null = _null_mask(arr)
    root = dtype.root
    if root == "BOOLEAN":
        return _fixed(as_numpy(arr).astype(np.uint64), null)
    if root == "TINYINT":
        return _fixed(_ints(arr, "int8", "uint8"), null)
    if root == "SMALLINT":
        return _fixed(_ints(arr, "int16", "uint16"), null)
    if root in ("INT", "DATE", "TIME"):
        if root != "INT":
            arr = arr.cast(pa.int32())
        return _fixed(_ints(arr, "int32", "uint32"), null)
    if root == "BIGINT":
        return _fixed(_ints(arr, "int64", "uint64"), null)
    if root == "FLOAT":
        values = as_numpy(arr).astype(np.float32, copy=False)
        return _fixed(values.view(np.uint32).astype(np.uint64), null)
    if root == "DOUBLE":
        values = as_numpy(arr).astype(np.float64, copy=False)
        return _fixed(values.view(np.uint64), null)
    if dtype.is_string or dtype.is_binary:
        return _string_column(arr, null)
    if root == "DECIMAL":
        if dtype.is_compact_decimal:
            unscaled = _decimal_unscaled(arr)[:, :8].copy().view("<u8").ravel()
            return _fixed(unscaled, null)
        return _wide_decimal_column(arr, null)
    if dtype.is_timestamp:
        millis, nanos = _timestamp_parts(arr)
        if dtype.is_compact_timestamp:
            return _fixed(millis.view(np.uint64), null)
        n = len(arr)
        var_bytes = np.where(null[:, None], 0, millis[:, None]).astype("<i8").view(np.uint8).ravel()
        slot = np.where(null, 0, nanos).astype(np.uint64)
        return _Column(slot, null, np.ones(n, bool), var_bytes, np.full(n, 8, np.int64), np.full(n, 8, np.int64))
    raise UnsupportedTypeError(f"cannot encode {dtype} in a BinaryRow")


def encode_rows(types: Sequence[DataType], arrays: Sequence[pa.Array], num_rows: int | None = None) -> BinaryRows:
    """Encode ``len(types)`` columns of equal length into BinaryRows, vectorised over rows."""
    arity = len(types)
    n = num_rows if num_rows is not None else (len(arrays[0]) if arrays else 0)
    head = header_size(arity)
    fixed_end = head + 8 * arity
    columns = [_column(t, a) for t, a in zip(types, arrays, strict=False)]
    if arity <= 56 and not any(col.in_var.any() for col in columns):
        return _encode_fixed(arity, n, head, columns)
    reserved = np.zeros((n, arity), dtype=np.int64)
    for i, col in enumerate(columns):
        reserved[col.in_var, i] = col.var_reserved
    var_start = fixed_end + np.cumsum(reserved, axis=1) - reserved  # per row, per field
    sizes = fixed_end + reserved.sum(axis=1)
    width = int(sizes.max()) if n else fixed_end
    data = np.zeros((n, width), dtype=np.uint8)
    for i, col in enumerate(columns):
        if col.null.any():
            byte, bit = divmod(i + 8, 8)
            data[:, byte] |= np.where(col.null, np.uint8(1 << bit), np.uint8(0))
        slot = col.slot
        if col.in_var.any():
            offsets = var_start[:, i].astype(np.uint64)
            slot = np.where(col.in_var, (offsets << np.uint64(32)) | (slot & np.uint64(0xFFFFFFFF)), slot)
            rows = np.flatnonzero(col.in_var)
            lens = col.var_len
            within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
            dest = np.repeat(rows * width + var_start[rows, i], lens) + within
            data.reshape(-1)[dest] = col.var_bytes
        data[:, head + 8 * i : head + 8 * i + 8] = slot.astype("<u8").view(np.uint8).reshape(n, 8)
    return BinaryRows(arity, data, sizes.astype(np.int64))


def _encode_fixed(arity: int, n: int, head: int, columns: list[_Column]) -> BinaryRows:
    """Fast path: every value fits its slot, so all rows have the same width."""
    words = np.zeros((n, (head + 8 * arity) // 8), dtype="<u8")
    header = np.zeros(n, dtype=np.uint64)
    for i, col in enumerate(columns):
        if col.null.any():
            header |= np.where(col.null, np.uint64(1) << np.uint64(i + 8), np.uint64(0))
        words[:, head // 8 + i] = col.slot
    words[:, 0] = header  # row kind (byte 0, +I = 0) and up to 56 null bits
    data = words.view(np.uint8).reshape(n, head + 8 * arity)
    return BinaryRows(arity, data, np.full(n, head + 8 * arity, dtype=np.int64))


def encode_values(types: Sequence[DataType], values: Sequence[Any]) -> bytes:
    """One row of Python values, serialized with its arity prefix."""
    arrays = [from_pylist([v], t.to_arrow()) for t, v in zip(types, values, strict=False)]
    return encode_rows(types, arrays, 1).row(0)


EMPTY_ROW = struct.pack(">i", 0) + bytes(8)


# ---------------------------------------------------------------------------------------------
# decoding (metadata only: partitions, keys, statistics)
# ---------------------------------------------------------------------------------------------


def decode_row(payload: bytes, types: Sequence[DataType], *, source: str = "<metadata>") -> tuple[Any, ...]:
    """Decode one serialized BinaryRow (with arity prefix) into Python values."""
    try:
        return _decode(payload, types)
    except (struct.error, IndexError, ValueError, OverflowError, UnicodeDecodeError) as exc:
        raise CorruptMetadataError(source, f"bad BinaryRow {payload[:32].hex()}...: {exc}") from exc


def _decode(payload: bytes, types: Sequence[DataType]) -> tuple[Any, ...]:
    (arity,) = struct.unpack_from(">i", payload, 0)
    if arity != len(types):
        raise ValueError(f"arity {arity} != expected {len(types)}")
    row = memoryview(payload)[4:]
    head = header_size(arity)
    if len(row) < head + 8 * arity:
        raise ValueError("row shorter than its fixed part")
    out: list[Any] = []
    for i, t in enumerate(types):
        byte, bit = divmod(i + 8, 8)
        if row[byte] & (1 << bit):
            out.append(None)
            continue
        off = head + 8 * i
        slot_bytes = bytes(row[off : off + 8])
        out.append(_decode_value(t, slot_bytes, row))
    return tuple(out)


def _decode_value(t: DataType, slot_bytes: bytes, row: memoryview) -> Any:
    root = t.root
    (slot,) = struct.unpack("<Q", slot_bytes)
    if root == "BOOLEAN":
        return slot_bytes[0] != 0
    if root == "TINYINT":
        return struct.unpack_from("<b", slot_bytes)[0]
    if root == "SMALLINT":
        return struct.unpack_from("<h", slot_bytes)[0]
    if root in ("INT", "TIME"):
        return struct.unpack_from("<i", slot_bytes)[0]
    if root == "DATE":
        return _EPOCH_DATE + dt.timedelta(days=struct.unpack_from("<i", slot_bytes)[0])
    if root == "BIGINT":
        return struct.unpack_from("<q", slot_bytes)[0]
    if root == "FLOAT":
        return struct.unpack_from("<f", slot_bytes)[0]
    if root == "DOUBLE":
        return struct.unpack_from("<d", slot_bytes)[0]
    if t.is_string or t.is_binary:
        if slot_bytes[7] & 0x80:
            raw = slot_bytes[: slot_bytes[7] & 0x7F]
        else:
            offset, length = slot >> 32, slot & 0xFFFFFFFF
            if offset + length > len(row):
                raise ValueError("variable part out of bounds")
            raw = bytes(row[offset : offset + length])
        return raw.decode("utf-8") if t.is_string else raw
    if root == "DECIMAL":
        if t.is_compact_decimal:
            unscaled = struct.unpack_from("<q", slot_bytes)[0]
        else:
            offset, length = slot >> 32, slot & 0xFFFFFFFF
            unscaled = int.from_bytes(bytes(row[offset : offset + length]), "big", signed=True)
        # An exact context: the default 28-digit context would round DECIMAL(38, s) values.
        return decimal.Decimal(unscaled).scaleb(-(t.scale or 0), _EXACT)
    if t.is_timestamp:
        if t.is_compact_timestamp:
            millis, nanos = struct.unpack_from("<q", slot_bytes)[0], 0
        else:
            offset, nanos = slot >> 32, slot & 0xFFFFFFFF
            millis = struct.unpack_from("<q", row, offset)[0]
        value = _EPOCH + dt.timedelta(milliseconds=millis, microseconds=nanos // 1000)
        return value.replace(tzinfo=dt.UTC) if root == "TIMESTAMP_LTZ" else value
    raise UnsupportedTypeError(f"cannot decode {t}")
