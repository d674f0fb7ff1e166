"""Paimon's hash index files (``index/index-<uuid>-<n>``, index type ``HASH``): the key hashes of
one (partition, bucket) of a dynamic-bucket table, each a big-endian int32 (Paimon 0.9's
``HashIndexFile``), in no particular order and without a header."""

from __future__ import annotations

import numpy as np

from lakestore.errors import CorruptMetadataError

HASH_INDEX = "HASH"


def encode_hash_index(hashes: np.ndarray) -> bytes:
    return np.asarray(hashes, dtype=np.int32).astype(">i4").tobytes()


def decode_hash_index(data: bytes, *, path: str = "", row_count: int | None = None) -> np.ndarray:
    """The hashes of an index file, as int32; ``row_count`` (from the index manifest) is checked."""
    if len(data) % 4:
        raise CorruptMetadataError(path, f"hash index of {len(data)} bytes is not a whole number of int32 hashes")
    hashes = np.frombuffer(data, dtype=">i4").astype(np.int32)
    if row_count is not None and row_count != len(hashes):
        raise CorruptMetadataError(path, f"hash index holds {len(hashes)} hashes, its manifest entry says {row_count}")
    return hashes
