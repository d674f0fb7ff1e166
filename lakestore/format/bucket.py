"""Paimon's bucket functions (``bucket-function.type``, Paimon 2.0's ``BucketFunction``):

- ``default``: MurmurHash3 (x86, 32-bit, by 4-byte words, seed 42) of the bucket key's
  BinaryRow, then ``abs(hash % buckets)`` in Java int arithmetic (``DefaultBucketFunction``);
- ``mod``: ``floorMod(key, buckets)`` of a single INT or BIGINT bucket key (a null key is 0)
  (``ModBucketFunction``);
- ``hive``: Hive's hash, ``31 * h + hash(field)`` over the key fields (null 0, integers their
  value, BIGINT and DOUBLE ``Long.hashCode``, FLOAT its int bits, strings and binaries
  ``31 * h + byte`` over their signed bytes, decimals ``BigDecimal.hashCode`` of the value
  without trailing zeros), then ``(h & Integer.MAX_VALUE) % buckets`` (``HiveBucketFunction``).

Vectorised over rows (hive's strings, binaries and decimals row by row)."""

from __future__ import annotations

import decimal
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import OptionError
from lakestore.format.binary_row import BinaryRows, encode_rows
from lakestore.format.types import DataType

BUCKET_FUNCTIONS = ("default", "mod", "hive")

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_SEED = 42


def _rotl_inplace(x: np.ndarray, r: int, scratch: np.ndarray) -> None:
    np.right_shift(x, np.uint32(32 - r), out=scratch)
    np.left_shift(x, np.uint32(r), out=x)
    np.bitwise_or(x, scratch, out=x)


def hash_rows(rows: BinaryRows) -> np.ndarray:
    """Java ``BinaryRow.hashCode()`` of every row, as int32 (in-place NumPy passes: no
    temporaries per word)."""
    words = rows.words()
    n = len(rows)
    nwords = rows.sizes // 4
    h = np.full(n, _SEED, dtype=np.uint32)
    uniform = bool((nwords == nwords[0]).all()) if n else True
    k, scratch = np.empty(n, dtype=np.uint32), np.empty(n, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            np.multiply(words[:, j], _C1, out=k)
            _rotl_inplace(k, 15, scratch)
            np.multiply(k, _C2, out=k)
            mixed = h if uniform else h.copy()
            np.bitwise_xor(mixed, k, out=mixed)
            _rotl_inplace(mixed, 13, scratch)
            np.multiply(mixed, np.uint32(5), out=mixed)
            np.add(mixed, np.uint32(0xE6546B64), out=mixed)
            if not uniform:
                h = np.where(j < nwords, mixed, h)
        h ^= rows.sizes.astype(np.uint32)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h.view(np.int32)


def bucket_of_hashes(hashes: np.ndarray, num_buckets: int) -> np.ndarray:
    # Java's int remainder truncates toward zero as C's does; |h % b| < b cannot overflow.
    return np.abs(np.fmod(hashes.astype(np.int32, copy=False), np.int32(num_buckets)))


def compute_buckets(types: Sequence[DataType], arrays: Sequence[pa.Array], num_buckets: int, function: str = "default") -> np.ndarray:
    """Bucket of each row given the bucket-key columns, by ``function`` (``bucket-function.type``)."""
    check_bucket_function(function, types)
    if not arrays or len(arrays[0]) == 0:
        return np.zeros(0, dtype=np.int32)
    if function == "mod":
        return _mod_buckets(arrays[0], num_buckets)
    if function == "hive":
        return _hive_buckets(types, arrays, num_buckets)
    return bucket_of_hashes(hash_rows(encode_rows(types, arrays)), num_buckets)


_HIVE_INT_ROOTS = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "DATE")
_HIVE_ROOTS = (*_HIVE_INT_ROOTS, "BIGINT", "FLOAT", "DOUBLE", "CHAR", "VARCHAR", "BINARY", "VARBINARY", "DECIMAL")


def check_bucket_function(function: str, types: Sequence[DataType]) -> None:
    """Refuse bucket keys the function cannot hash, as Paimon's constructors do."""
    if function not in BUCKET_FUNCTIONS:
        raise OptionError(f"bucket-function.type={function!r} is not one of {', '.join(BUCKET_FUNCTIONS)}")
    if function == "mod" and (len(types) != 1 or types[0].root not in ("INT", "BIGINT")):
        raise OptionError("bucket-function.type=mod needs a single bucket key of type INT or BIGINT")
    if function == "hive":
        bad = [t.root for t in types if t.root not in _HIVE_ROOTS]
        if bad:
            raise OptionError(f"bucket-function.type=hive cannot hash bucket keys of type {', '.join(bad)}")


def _mod_buckets(array: pa.Array, num_buckets: int) -> np.ndarray:
    values = pc.fill_null(array.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.mod(values, np.int64(num_buckets)).astype(np.int32)  # Java's floorMod: the divisor's sign


def _hive_bytes_hash(data: bytes) -> int:
    h = 0
    for b in data:
        h = (h * 31 + (b - 256 if b > 127 else b)) & 0xFFFFFFFF
    return h


def _java_big_integer_hash(value: int) -> int:
    magnitude, h = abs(value), 0
    words = []
    while magnitude:
        words.append(magnitude & 0xFFFFFFFF)
        magnitude >>= 32
    for word in reversed(words):
        h = (31 * h + word) & 0xFFFFFFFF
    return (h * (-1 if value < 0 else 1)) & 0xFFFFFFFF


def _hive_decimal_hash(value: decimal.Decimal) -> int:
    """``BigDecimal.hashCode`` (31 * unscaled.hashCode() + scale) of Hive's normalized decimal."""
    if value == 0:
        return 0  # BigDecimal.ZERO: unscaled 0, scale 0
    sign, digits, exponent = value.normalize().as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits))) * (-1 if sign else 1)
    if exponent > 0:  # a negative scale is set to 0
        unscaled, exponent = unscaled * 10**exponent, 0
    return (31 * _java_big_integer_hash(unscaled) - exponent) & 0xFFFFFFFF


def _hive_field_hashes(dtype: DataType, array: pa.Array) -> np.ndarray:
    """Hive's hash of every value, as uint32 (null: 0)."""
    root = dtype.root
    valid = ~np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if root in _HIVE_INT_ROOTS:
        if root == "DATE":
            array = array.cast(pa.int32())
        values = pc.fill_null(array.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        out = values.astype(np.uint64).astype(np.uint32)
    elif root in ("BIGINT", "DOUBLE"):
        if root == "DOUBLE":
            floats = pc.fill_null(array, 0.0).to_numpy(zero_copy_only=False).astype(np.float64)
            floats = np.where(floats == 0.0, 0.0, floats)  # -0.0 hashes as 0
            bits = np.where(np.isnan(floats), np.uint64(0x7FF8000000000000), floats.view(np.uint64))  # Java's canonical NaN
        else:
            bits = pc.fill_null(array, 0).to_numpy(zero_copy_only=False).astype(np.int64).view(np.uint64)
        out = ((bits ^ (bits >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    elif root == "FLOAT":
        floats = pc.fill_null(array, 0.0).to_numpy(zero_copy_only=False).astype(np.float32)
        floats = np.where(floats == 0.0, np.float32(0.0), floats)
        out = np.where(np.isnan(floats), np.uint32(0x7FC00000), floats.view(np.uint32)).astype(np.uint32)
    else:
        values = array.to_pylist()
        hashes = []
        for v in values:
            if v is None:
                hashes.append(0)
            elif root == "DECIMAL":
                hashes.append(_hive_decimal_hash(v))
            else:
                hashes.append(_hive_bytes_hash(v.encode("utf-8") if isinstance(v, str) else bytes(v)))
        out = np.array(hashes, dtype=np.uint64).astype(np.uint32)
    return np.where(valid, out, np.uint32(0)).astype(np.uint32)


def _hive_buckets(types: Sequence[DataType], arrays: Sequence[pa.Array], num_buckets: int) -> np.ndarray:
    h = np.zeros(len(arrays[0]), dtype=np.uint32)
    with np.errstate(over="ignore"):
        for dtype, array in zip(types, arrays, strict=True):
            h = h * np.uint32(31) + _hive_field_hashes(dtype, array)
    positive = (h & np.uint32(0x7FFFFFFF)).astype(np.int64)
    return (positive % np.int64(num_buckets)).astype(np.int32)
