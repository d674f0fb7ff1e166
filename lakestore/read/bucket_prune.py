"""Bucket pruning: on a fixed-bucket table, a predicate that pins every bucket-key column to
literals (``==``, ``isin``, combined with ``&`` and ``|``) can only match rows in the buckets of
those literals, computed with the writers' bucket function (``bucket-function.type``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from lakestore.format.bucket import compute_buckets
from lakestore.format.types import DataType
from lakestore.read.parquet_read import prunable
from lakestore.read.predicate import And, Compare, IsIn, Or, Predicate

# Constraint: bucket-key column -> the values a matching row may have there (absent: any value).
_Constraint = dict[str, list[Any]]
# Past this many literal combinations, pruning is not worth its cost: read every bucket.
_MAX_COMBINATIONS = 4096


def _constraints(predicate: Predicate, keys: set[str]) -> list[_Constraint]:
    """A disjunction of constraints that every row matching ``predicate`` satisfies."""
    if isinstance(predicate, Compare) and predicate.op == "==" and predicate.column in keys:
        return [{predicate.column: [] if predicate.value is None else [predicate.value]}]
    if isinstance(predicate, IsIn) and predicate.column in keys:
        return [{predicate.column: [v for v in predicate.values if v is not None]}]
    if isinstance(predicate, Or):
        return _constraints(predicate.left, keys) + _constraints(predicate.right, keys)
    if isinstance(predicate, And):
        left, right = _constraints(predicate.left, keys), _constraints(predicate.right, keys)
        if len(left) * len(right) > _MAX_COMBINATIONS:
            return [{}]
        out = []
        for a, b in itertools.product(left, right):
            both = dict(a)
            for name, values in b.items():
                # A row satisfies both: either list is a (safe) superset of its value.
                if name not in both or len(values) < len(both[name]):
                    both[name] = values
            out.append(both)
        return out
    return [{}]


def bucket_filter(
    predicate: Predicate | None, bucket_keys: Sequence[str], key_types: Sequence[DataType], function: str = "default"
) -> Callable[[int], set[int]] | None:
    """A function from a file's total bucket count to the buckets that may hold matching rows,
    or None when the predicate does not pin the bucket key. ``function``: the table's
    ``bucket-function.type``, as its writers assign buckets."""
    if predicate is None or not bucket_keys:
        return None
    arrow_types = [t.to_arrow() for t in key_types]
    if not all(prunable(t) for t in arrow_types):
        return None
    combos: list[tuple[Any, ...]] = []
    for constraint in _constraints(predicate, set(bucket_keys)):
        if any(k not in constraint for k in bucket_keys):
            return None
        lists = [constraint[k] for k in bucket_keys]
        count = 1
        for values in lists:
            count *= len(values)
        if count > _MAX_COMBINATIONS:
            return None
        combos.extend(itertools.product(*lists))
    try:
        columns = [pa.array([c[i] for c in combos], type=t) for i, t in enumerate(arrow_types)]
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return None  # literals of another type: the row filter decides
    cache: dict[int, set[int]] = {}

    def buckets(total: int) -> set[int]:
        if total not in cache:
            cache[total] = {int(b) for b in compute_buckets(list(key_types), columns, total, function)} if combos else set()
        return cache[total]

    return buckets
