"""Paimon's bucket function as Spark SQL expressions, so that ``distribute`` computes buckets in
the JVM (whole-stage code generation) instead of sending the key columns through a Python UDF.

The bucket of a row is ``abs(murmur3_32(BinaryRow(bucket keys)) % buckets)`` in Java int
arithmetic (``lakestore.format.bucket``). For keys whose BinaryRow is fixed-width (integers,
dates, booleans) the row is a header word of null bits plus one 8-byte slot per key, so the hash is
a fixed sequence of 32-bit mixing steps over values Spark has: here each step is a projection of
BIGINT columns holding unsigned 32-bit values (products split in 16-bit halves, so nothing
overflows even under ANSI mode). Other key types (strings, decimals, timestamps, floats) return
None and keep the Arrow UDF.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lakestore.format.binary_row import header_size
from lakestore.format.types import DataType

_MASK = 0xFFFFFFFF
_C1, _C2 = 0xCC9E2D51, 0x1B873593
_SEED = 42
# Spark casts a value to these types before taking its bits (the table's type, as conform does).
_SQL_TYPES = {"BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int", "BIGINT": "bigint", "DATE": "date"}
_HASH = "__lakestore_h"


def supported(types: Sequence[DataType], function: str = "default") -> bool:
    """Whether the bucket keys' BinaryRow is fixed-width and header of one word (<= 56 keys),
    under Paimon's default bucket function (``mod`` and ``hive`` tables keep the Arrow UDF,
    which computes them as ``lakestore.format.bucket`` does)."""
    return function == "default" and 0 < len(types) <= 56 and all(t.root in _SQL_TYPES for t in types)


def _lit(value: int) -> Column:
    return F.lit(value).cast("bigint")


def _mul(x: Column, constant: int) -> Column:
    """(x * constant) mod 2^32 for 0 <= x < 2^32, without 64-bit overflow."""
    low = x * _lit(constant & 0xFFFF)
    high = F.shiftleft((x * _lit(constant >> 16)).bitwiseAND(_lit(0xFFFF)), 16)
    return (low + high).bitwiseAND(_lit(_MASK))


def _rotl(x: Column, r: int) -> Column:
    return F.shiftleft(x, r).bitwiseAND(_lit(_MASK)).bitwiseOR(F.shiftrightunsigned(x, 32 - r))


def _mix_k(word: Column) -> Column:
    return _mul(_rotl(_mul(word, _C1), 15), _C2)


def _mix_h(h: Column, k: Column) -> Column:
    return (_rotl(h.bitwiseXOR(k), 13) * _lit(5) + _lit(0xE6546B64)).bitwiseAND(_lit(_MASK))


def _mix_h_const(h: int, k: int) -> int:
    """The same step in Python, for words that are constant (zero) on every row."""
    x = (h ^ k) & _MASK
    x = ((x << 13) | (x >> 19)) & _MASK
    return (x * 5 + 0xE6546B64) & _MASK


def _slot_words(name: str, dtype: DataType) -> tuple[Column, Column | None]:
    """The two 32-bit words of a value's 8-byte slot (None: always zero), never null: Spark then
    generates code without null checks, small enough for the JIT to compile (a null value's slot
    is zero, which the caller applies)."""
    value = F.col(name).cast(_SQL_TYPES[dtype.root])
    root = dtype.root
    if root == "BOOLEAN":
        return F.when(F.coalesce(value, F.lit(False)), _lit(1)).otherwise(_lit(0)), None
    if root == "DATE":
        return F.coalesce(F.unix_date(value).cast("bigint"), _lit(0)).bitwiseAND(_lit(_MASK)), None
    width = {"TINYINT": 0xFF, "SMALLINT": 0xFFFF, "INT": _MASK, "BIGINT": _MASK}[root]
    as_long = F.coalesce(value.cast("bigint"), _lit(0))
    low = as_long.bitwiseAND(_lit(width))
    return low, (F.shiftrightunsigned(as_long, 32).bitwiseAND(_lit(_MASK)) if root == "BIGINT" else None)


def with_bucket(df: DataFrame, keys: Sequence[str], types: Sequence[DataType], buckets: int, name: str) -> DataFrame:
    """``df`` plus an INT column ``name``: each row's bucket, as ``lakestore.format.bucket``
    computes it (only for ``supported`` key types). A key whose table type is NOT NULL (every
    primary-key column) hashes without null bits: a null there is refused by the writer anyway."""
    assert supported(types)
    nullable = [df.schema[k].nullable and t.nullable for k, t in zip(keys, types, strict=True)]
    header_words = header_size(len(keys)) // 4
    words: list[Column | None] = []
    null_bits: Column | None = None
    for i, key in enumerate(keys):
        if nullable[i]:
            bit = F.when(F.col(key).isNull(), _lit(1 << (i + 8))).otherwise(_lit(0))
            null_bits = bit if null_bits is None else null_bits.bitwiseOR(bit)
    header: list[Column | None] = [None] * header_words
    if null_bits is not None:
        header[0] = null_bits.bitwiseAND(_lit(_MASK))
        if len(keys) > 24:
            header[1] = F.shiftrightunsigned(null_bits, 32)
    words.extend(header)
    for key, dtype in zip(keys, types, strict=True):
        low, high = _slot_words(key, dtype)
        words.extend([low, high])
    names = df.columns
    # Leading constant (zero) words mix into a constant: folded here.
    h_const, start = _SEED, 0
    while start < len(words) and words[start] is None:
        h_const = _mix_h_const(h_const, 0)
        start += 1
    out = df.select(*names, _lit(h_const).alias(_HASH))
    h = F.col(_HASH)
    zero_k = 0  # mix_k(0) == 0
    for word in words[start:]:
        # One projection per step: each step reads the previous hash several times, and Spark
        # keeps projections that would duplicate non-trivial expressions apart (no blow-up).
        k = _lit(zero_k) if word is None else _mix_k(word)
        out = out.select(*names, _mix_h(h, k).alias(_HASH))
    size = 4 * len(words)
    h1 = h.bitwiseXOR(_lit(size))
    out = out.select(*names, h1.bitwiseXOR(F.shiftrightunsigned(h1, 16)).alias(_HASH))
    out = out.select(*names, _mul(h, 0x85EBCA6B).alias(_HASH))
    out = out.select(*names, h.bitwiseXOR(F.shiftrightunsigned(h, 13)).alias(_HASH))
    out = out.select(*names, _mul(h, 0xC2B2AE35).alias(_HASH))
    out = out.select(*names, h.bitwiseXOR(F.shiftrightunsigned(h, 16)).alias(_HASH))
    signed = F.when(h >= _lit(1 << 31), h - _lit(1 << 32)).otherwise(h)  # Java int
    return out.select(*names, F.abs(signed % _lit(buckets)).cast("int").alias(name))
