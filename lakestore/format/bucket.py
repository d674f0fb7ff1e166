"""Paimon's bucket function: MurmurHash3 (x86, 32-bit, by 4-byte words, seed 42) of the bucket
key's BinaryRow, then ``abs(hash % buckets)`` in Java int arithmetic. Vectorised over rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from lakestore.format.binary_row import BinaryRows, encode_rows
from lakestore.format.types import DataType

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


def compute_buckets(types: Sequence[DataType], arrays: Sequence[pa.Array], num_buckets: int) -> np.ndarray:
    """Bucket of each row given the bucket-key columns."""
    if not arrays or len(arrays[0]) == 0:
        return np.zeros(0, dtype=np.int32)
    return bucket_of_hashes(hash_rows(encode_rows(types, arrays)), num_buckets)
