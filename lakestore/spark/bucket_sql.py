"""Paimon's bucket function as Spark SQL expressions, so that ``distribute`` computes buckets in
the JVM (whole-stage code generation) instead of sending the key columns through a Python UDF.

The bucket of a row is ``abs(murmur3_32(BinaryRow(bucket keys)) % buckets)`` in Java int
arithmetic (``lakestore.format.bucket``). For keys whose BinaryRow is fixed-width (integers,
dates, booleans) the row is a header word of null bits plus one 8-byte slot per key, so the hash is
a fixed sequence of 32-bit mixing steps over values Spark has: here each step is a projection of
BIGINT columns holding unsigned 32-bit values (products split in 16-bit halves, so nothing
overflows even under ANSI mode). Other key types (strings, decimals, timestamps, floats) return
None and keep the Arrow UDF.

The expressions are SQL text, one ``selectExpr`` per step: building them as ``Column`` objects
took ~600 calls into the JVM per ``distribute`` (0.4 s of a small write's planning).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame

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


def quote(name: str) -> str:
    """``name`` as a SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def _lit(value: int) -> str:
    return f"{value}L"


def _mul(x: str, constant: int) -> str:
    """(x * constant) mod 2^32 for 0 <= x < 2^32, without 64-bit overflow."""
    low = f"({x}) * {_lit(constant & 0xFFFF)}"
    high = f"shiftleft((({x}) * {_lit(constant >> 16)}) & {_lit(0xFFFF)}, 16)"
    return f"(({low}) + ({high})) & {_lit(_MASK)}"


def _rotl(x: str, r: int) -> str:
    return f"((shiftleft({x}, {r}) & {_lit(_MASK)}) | shiftrightunsigned({x}, {32 - r}))"


def _mix_k(word: str) -> str:
    return _mul(_rotl(_mul(word, _C1), 15), _C2)


def _mix_h(h: str, k: str) -> str:
    return f"(({_rotl(f'({h}) ^ ({k})', 13)}) * 5L + {_lit(0xE6546B64)}) & {_lit(_MASK)}"


def _mix_h_const(h: int, k: int) -> int:
    """The same step in Python, for words that are constant (zero) on every row."""
    x = (h ^ k) & _MASK
    x = ((x << 13) | (x >> 19)) & _MASK
    return (x * 5 + 0xE6546B64) & _MASK


def _slot_words(name: str, dtype: DataType) -> tuple[str, str | None]:
    """The two 32-bit words of a value's 8-byte slot (None: always zero), never null: Spark then
    generates code without null checks, small enough for the JIT to compile (a null value's slot
    is zero, which the caller applies)."""
    value = f"CAST({quote(name)} AS {_SQL_TYPES[dtype.root]})"
    root = dtype.root
    if root == "BOOLEAN":
        return f"CASE WHEN coalesce({value}, false) THEN 1L ELSE 0L END", None
    if root == "DATE":
        return f"coalesce(CAST(unix_date({value}) AS BIGINT), 0L) & {_lit(_MASK)}", None
    width = {"TINYINT": 0xFF, "SMALLINT": 0xFFFF, "INT": _MASK, "BIGINT": _MASK}[root]
    as_long = f"coalesce(CAST({value} AS BIGINT), 0L)"
    low = f"{as_long} & {_lit(width)}"
    return low, (f"shiftrightunsigned({as_long}, 32) & {_lit(_MASK)}" if root == "BIGINT" else None)


def with_bucket(df: DataFrame, keys: Sequence[str], types: Sequence[DataType], buckets: int, name: str) -> DataFrame:
    """``df`` plus an INT column ``name``: each row's bucket, as ``lakestore.format.bucket``
    computes it (only for ``supported`` key types). A key whose table type is NOT NULL (every
    primary-key column) hashes without null bits: a null there is refused by the writer anyway."""
    assert supported(types)
    schema = df.schema
    nullable = [schema[k].nullable and t.nullable for k, t in zip(keys, types, strict=True)]
    header_words = header_size(len(keys)) // 4
    words: list[str | None] = []
    bits = [f"CASE WHEN {quote(key)} IS NULL THEN {_lit(1 << (i + 8))} ELSE 0L END" for i, key in enumerate(keys) if nullable[i]]
    null_bits = " | ".join(f"({b})" for b in bits) if bits else None
    header: list[str | None] = [None] * header_words
    if null_bits is not None:
        header[0] = f"({null_bits}) & {_lit(_MASK)}"
        if len(keys) > 24:
            header[1] = f"shiftrightunsigned({null_bits}, 32)"
    words.extend(header)
    for key, dtype in zip(keys, types, strict=True):
        low, high = _slot_words(key, dtype)
        words.extend([low, high])
    names = [quote(c) for c in df.columns]
    h = quote(_HASH)

    def step(out: DataFrame, expression: str, alias: str = _HASH) -> DataFrame:
        return out.selectExpr(*names, f"{expression} AS {quote(alias)}")

    # Leading constant (zero) words mix into a constant: folded here.
    h_const, start = _SEED, 0
    while start < len(words) and words[start] is None:
        h_const = _mix_h_const(h_const, 0)
        start += 1
    out = step(df, _lit(h_const))
    for word in words[start:]:
        # One projection per step: each step reads the previous hash several times, and Spark
        # keeps projections that would duplicate non-trivial expressions apart (no blow-up).
        k = "0L" if word is None else _mix_k(word)  # mix_k(0) == 0
        out = step(out, _mix_h(h, k))
    size = 4 * len(words)
    out = step(out, f"(({h}) ^ {_lit(size)}) ^ shiftrightunsigned(({h}) ^ {_lit(size)}, 16)")
    out = step(out, _mul(h, 0x85EBCA6B))
    out = step(out, f"({h}) ^ shiftrightunsigned({h}, 13)")
    out = step(out, _mul(h, 0xC2B2AE35))
    out = step(out, f"({h}) ^ shiftrightunsigned({h}, 16)")
    signed = f"CASE WHEN {h} >= {_lit(1 << 31)} THEN {h} - {_lit(1 << 32)} ELSE {h} END"  # Java int
    return step(out, f"CAST(abs(({signed}) % {_lit(buckets)}) AS INT)", name)
