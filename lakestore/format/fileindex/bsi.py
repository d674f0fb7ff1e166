"""Paimon's ``bsi`` file index (``BitSliceIndexBitmapFileIndex``): a bit-sliced index of a numeric
column, answering equality, range and null predicates with row positions.

Values are keyed as longs: TINYINT, SMALLINT, INT, BIGINT their value, DATE its days, TIME its
milliseconds of the day, TIMESTAMP and TIMESTAMP_LTZ their epoch milliseconds (precision up to 3)
or microseconds, DECIMAL its unscaled value. Non-negative values and the absolute values of
negative ones go to two ``BitSliceIndexRoaringBitmap``s.

Layout (big-endian): a version byte (1), the row count (int), then for the non-negative side and
the negative side a has-values byte and, when set, the side's index: a version byte (1), min and
max (longs; Java's writer always sets min to 0), the rows holding a value (a portable
RoaringBitmap), the number of slices (int: the bit length of ``max - min``) and one bitmap per
bit of ``value - min``, lowest bit first. ``Long.MIN_VALUE`` cannot be stored (Java's writer fails
on it). Reads rebuild each row's value with NumPy and compare; the answers are Java's (``not
equal`` keeps only non-null rows).
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.errors import CorruptMetadataError, UnsupportedTableError, UnsupportedTypeError
from lakestore.format.fileindex.base import FileIndexReader, FileIndexResult, FileIndexType, FileIndexWriter
from lakestore.format.fileindex.keys import TIMESTAMP_ROOTS, key_array, literal_key
from lakestore.format.roaring import read_bitmap, serialize_bitmap
from lakestore.format.types import DataType

BSI_INDEX = "bsi"
VERSION_1 = 1
_SOURCE = "bsi file index"
_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "DECIMAL", *TIMESTAMP_ROOTS)
_LONG_MIN = -(2**63)
_OPS: dict[str, Callable[[Any, Any], Any]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def supports_bsi(data_type: DataType) -> bool:
    return data_type.root in _ROOTS


def long_keys(data_type: DataType, values: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A column's values as the index's longs: (int64 values, validity mask). Raises
    ``ValueError`` for a DECIMAL beyond a long's range (Java's ``longValueExact`` fails too)."""
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if data_type.root == "DECIMAL":
        scale = data_type.scale or 0
        if not pa.types.is_decimal(arr.type) or arr.type.scale != scale:
            arr = arr.cast(pa.decimal128(38, scale))
        if arr.type.byte_width != 16:
            arr = arr.cast(pa.decimal128(38, scale))
        buf = arr.buffers()[1]
        words = 2 * (len(arr) + arr.offset)
        raw = np.frombuffer(buf, dtype="<i8", count=words)[2 * arr.offset :] if buf is not None else np.zeros(0, "<i8")
        low, high = raw[0::2].astype(np.int64), raw[1::2]
        if np.any(valid & (high != (low >> 63))):
            raise ValueError("a DECIMAL value beyond a long's range cannot be bsi-indexed")
        return np.where(valid, low, 0), valid
    keys = key_array(data_type, arr)
    out = np.asarray(keys.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    return out, valid


# ---------------------------------------------------------------- writer


class BsiIndexWriter(FileIndexWriter):
    def __init__(self, data_type: DataType) -> None:
        if not supports_bsi(data_type):
            raise UnsupportedTypeError(f"the bsi file index does not support type {data_type}")
        self.data_type = data_type
        self._values: list[np.ndarray] = []
        self._valid: list[np.ndarray] = []

    def add(self, values: pa.Array) -> None:
        """Raises ``ValueError`` for a value the index cannot hold (``Long.MIN_VALUE``, a DECIMAL
        beyond a long)."""
        keys, valid = long_keys(self.data_type, values)
        if np.any(valid & (keys == _LONG_MIN)):
            raise ValueError(f"the bsi file index cannot hold {_LONG_MIN}")
        self._values.append(keys)
        self._valid.append(valid)

    def to_bytes(self) -> bytes:
        values = np.concatenate(self._values) if self._values else np.empty(0, np.int64)
        valid = np.concatenate(self._valid) if self._valid else np.empty(0, bool)
        return encode_bsi(values, valid)


def encode_bsi(values: np.ndarray, valid: np.ndarray) -> bytes:
    """The index over int64 ``values`` where ``valid``, in row order: Java's bytes."""
    out = bytearray(struct.pack(">bi", VERSION_1, len(values)))
    for negative in (False, True):
        side = valid & ((values < 0) if negative else (values >= 0))
        rows = np.flatnonzero(side)
        if not rows.size:
            out += b"\x00"
            continue
        magnitudes = np.abs(values[rows]) if negative else values[rows]
        top = int(magnitudes.max())
        out += b"\x01" + struct.pack(">bqq", VERSION_1, 0, top)
        out += serialize_bitmap(rows.astype(np.uint32))
        slices = top.bit_length()
        out += struct.pack(">i", slices)
        unsigned = magnitudes.astype(np.uint64)
        for bit in range(slices):
            out += serialize_bitmap(rows[(unsigned >> np.uint64(bit)) & np.uint64(1) == 1].astype(np.uint32))
    return bytes(out)


# ---------------------------------------------------------------- reader


class BsiIndexReader(FileIndexReader):
    """Rebuilds every row's value from the slices on construction."""

    def __init__(self, data_type: DataType, data: bytes) -> None:
        if not supports_bsi(data_type):
            raise UnsupportedTypeError(f"the bsi file index does not support type {data_type}")
        self.data_type = data_type
        try:
            self._read(memoryview(bytes(data)))
        except (struct.error, ValueError, IndexError) as exc:
            raise CorruptMetadataError(_SOURCE, f"truncated or invalid ({exc})") from exc

    def _read(self, buf: memoryview) -> None:
        version, self.rows = struct.unpack_from(">bi", buf, 0)
        if version > VERSION_1:
            raise UnsupportedTableError(f"bsi file index version {version} is newer than lakestore reads ({VERSION_1})")
        if version != VERSION_1 or self.rows < 0:
            raise CorruptMetadataError(_SOURCE, f"version {version}, {self.rows} rows")
        pos = 5
        self.values = np.zeros(self.rows, dtype=np.int64)
        self.valid = np.zeros(self.rows, dtype=bool)
        for sign in (1, -1):
            (has,) = struct.unpack_from(">b", buf, pos)
            pos += 1
            if not has:
                continue
            side_version, low, _high = struct.unpack_from(">bqq", buf, pos)
            if side_version > VERSION_1:
                raise UnsupportedTableError(f"bsi version {side_version} is newer than lakestore reads ({VERSION_1})")
            pos += 17
            rows, used = read_bitmap(buf, pos, source=_SOURCE)
            pos += used
            (count,) = struct.unpack_from(">i", buf, pos)
            pos += 4
            if not 0 <= count <= 64 or (rows.size and int(rows[-1]) >= self.rows):
                raise CorruptMetadataError(_SOURCE, f"{count} slices, rows beyond {self.rows}")
            magnitude = np.zeros(self.rows, dtype=np.uint64)
            for bit in range(count):
                slice_rows, used = read_bitmap(buf, pos, source=_SOURCE)
                pos += used
                if slice_rows.size and int(slice_rows[-1]) >= self.rows:
                    raise CorruptMetadataError(_SOURCE, f"slice rows beyond {self.rows}")
                magnitude[slice_rows] |= np.uint64(1) << np.uint64(bit)
            side = (magnitude[rows].astype(np.int64) + low) * sign
            self.values[rows] = side
            self.valid[rows] = True

    def _rows(self, mask: np.ndarray) -> FileIndexResult:
        rows = np.flatnonzero(mask).astype(np.uint32)
        return FileIndexResult(rows.size > 0, rows)

    def _equal_mask(self, values: Sequence[Any]) -> np.ndarray | None:
        mask = np.zeros(self.rows, dtype=bool)
        for value in values:
            if value is None:
                continue
            converted = literal_key(self.data_type, value)
            if converted is None:
                return None
            key, exact = converted
            if exact and isinstance(key, int) and _LONG_MIN < key < 2**63:
                mask |= self.valid & (self.values == key)
        return mask

    def equal(self, value: Any) -> FileIndexResult:
        mask = self._equal_mask([value])
        return FileIndexResult(True) if mask is None else self._rows(mask)

    def is_in(self, values: Sequence[Any]) -> FileIndexResult:
        mask = self._equal_mask(values)
        return FileIndexResult(True) if mask is None else self._rows(mask)

    def not_equal(self, value: Any) -> FileIndexResult:
        return self.not_in([value])

    def not_in(self, values: Sequence[Any]) -> FileIndexResult:
        mask = self._equal_mask(values)
        return FileIndexResult(True) if mask is None else self._rows(self.valid & ~mask)

    def compare(self, op: str, value: Any) -> FileIndexResult:
        """Raises ``ValueError`` for an unknown ``op``."""
        if op not in _OPS:
            raise ValueError(f"unknown comparison {op!r}")
        converted = literal_key(self.data_type, value) if value is not None else None
        if converted is None or not isinstance(converted[0], int):
            return FileIndexResult(True)
        key, exact = converted[0], converted[1]
        if not exact:
            # the literal lies between key and key + 1
            op = {"<": "<=", ">=": ">"}.get(op, op)
        if key <= _LONG_MIN:
            # nothing is below Long.MIN_VALUE, every stored value is above it
            return self._rows(self.valid if op in (">", ">=") else np.zeros(self.rows, bool))
        if key >= 2**63:
            return self._rows(self.valid if op in ("<", "<=") else np.zeros(self.rows, bool))
        return self._rows(self.valid & _OPS[op](self.values, key))

    def is_null(self) -> FileIndexResult:
        return self._rows(~self.valid)

    def is_not_null(self) -> FileIndexResult:
        return self._rows(self.valid)


class BsiIndexType(FileIndexType):
    """The ``bsi`` index type."""

    name = BSI_INDEX

    def supports(self, data_type: DataType) -> bool:
        return supports_bsi(data_type)

    def writer(self, data_type: DataType, options: Mapping[str, str]) -> FileIndexWriter:
        """Raises ``UnsupportedTypeError`` for a type the index cannot hold."""
        return BsiIndexWriter(data_type)

    def reader(self, data_type: DataType, options: Mapping[str, str], data: bytes) -> FileIndexReader:
        """Raises ``CorruptMetadataError`` for bytes that are no bsi index, and
        ``UnsupportedTableError`` for a version newer than 1."""
        return BsiIndexReader(data_type, data)
