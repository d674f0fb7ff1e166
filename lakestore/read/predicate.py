"""A small predicate API: ``col("dt") == "x"``, ``&``, ``|``, ``~``, ``isin``, ``is_null``, ranges.

A predicate does three jobs: prune partitions (exact, on partition values), skip files whose
min/max statistics cannot match (conservative), and filter rows exactly (an Arrow expression).
"""

from __future__ import annotations

import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import SchemaMismatchError

# Column statistics for skipping: name -> (min, max, null_count, row_count); None if unknown.
Stats = Mapping[str, tuple[Any, Any, int | None, int]]


class Predicate(ABC):
    """A filter over a table's columns (``lakestore.col("dt") == "2024-01-01"``), combined with
    ``&``, ``|`` and ``~``: scans prune files with it and apply it to the rows."""

    @abstractmethod
    def to_arrow(self) -> pc.Expression:
        """The predicate as a ``pyarrow.compute`` expression (what filters the rows)."""

    @abstractmethod
    def columns(self) -> set[str]:
        """The columns the predicate reads."""

    @abstractmethod
    def might_match(self, stats: Stats) -> bool:
        """False only if no row with these statistics can match."""

    def __and__(self, other: Predicate) -> Predicate:
        return And(self, other)

    def __or__(self, other: Predicate) -> Predicate:
        return Or(self, other)

    def __invert__(self) -> Predicate:
        return Not(self)


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
# The comparison operators of ``Compare``.
COMPARE_OPS = tuple(_OPS)


def _comparable(a: Any, b: Any) -> bool:
    try:
        a < b  # noqa: B015 - probing comparability
    except TypeError:
        return False
    return True


@dataclass(frozen=True)
class Compare(Predicate):
    column: str
    op: str
    value: Any

    def to_arrow(self) -> pc.Expression:
        field = pc.field(self.column)
        return {
            "==": field == self.value,
            "!=": field != self.value,
            "<": field < self.value,
            "<=": field <= self.value,
            ">": field > self.value,
            ">=": field >= self.value,
        }[self.op]

    def columns(self) -> set[str]:
        return {self.column}

    def might_match(self, stats: Stats) -> bool:
        entry = stats.get(self.column)
        if entry is None:
            return True
        lo, hi, nulls, rows = entry
        if nulls is not None and nulls == rows:
            return False  # comparisons with null never match
        if lo is None or hi is None or not _comparable(lo, self.value) or not _comparable(hi, self.value):
            return True
        v = self.value
        if self.op == "==":
            return lo <= v <= hi
        if self.op == "!=":
            return not (lo == hi == v)
        if self.op == "<":
            return lo < v
        if self.op == "<=":
            return lo <= v
        if self.op == ">":
            return hi > v
        return hi >= v


@dataclass(frozen=True)
class IsIn(Predicate):
    column: str
    values: tuple[Any, ...]

    def to_arrow(self) -> pc.Expression:
        return pc.field(self.column).isin(list(self.values))

    def columns(self) -> set[str]:
        return {self.column}

    def might_match(self, stats: Stats) -> bool:
        return any(Compare(self.column, "==", v).might_match(stats) for v in self.values)


@dataclass(frozen=True)
class IsNull(Predicate):
    column: str
    negated: bool = False

    def to_arrow(self) -> pc.Expression:
        expr = pc.field(self.column).is_null()
        return ~expr if self.negated else expr

    def columns(self) -> set[str]:
        return {self.column}

    def might_match(self, stats: Stats) -> bool:
        entry = stats.get(self.column)
        if entry is None:
            return True
        _, _, nulls, rows = entry
        if nulls is None:
            return True
        return nulls < rows if self.negated else nulls > 0


@dataclass(frozen=True)
class And(Predicate):
    left: Predicate
    right: Predicate

    def to_arrow(self) -> pc.Expression:
        return self.left.to_arrow() & self.right.to_arrow()

    def columns(self) -> set[str]:
        return self.left.columns() | self.right.columns()

    def might_match(self, stats: Stats) -> bool:
        return self.left.might_match(stats) and self.right.might_match(stats)


@dataclass(frozen=True)
class Or(Predicate):
    left: Predicate
    right: Predicate

    def to_arrow(self) -> pc.Expression:
        return self.left.to_arrow() | self.right.to_arrow()

    def columns(self) -> set[str]:
        return self.left.columns() | self.right.columns()

    def might_match(self, stats: Stats) -> bool:
        return self.left.might_match(stats) or self.right.might_match(stats)


@dataclass(frozen=True)
class Not(Predicate):
    inner: Predicate

    def to_arrow(self) -> pc.Expression:
        return ~self.inner.to_arrow()

    def columns(self) -> set[str]:
        return self.inner.columns()

    def might_match(self, stats: Stats) -> bool:
        return True  # statistics cannot refute a negation in general


class Column:
    """Builds predicates: ``col("x") > 3``, ``col("x").isin([1, 2])``, ``col("x").between(1, 9)``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, value: object) -> Predicate:  # type: ignore[override]
        return Compare(self.name, "==", value)

    def __ne__(self, value: object) -> Predicate:  # type: ignore[override]
        return Compare(self.name, "!=", value)

    def __lt__(self, value: Any) -> Predicate:
        return Compare(self.name, "<", value)

    def __le__(self, value: Any) -> Predicate:
        return Compare(self.name, "<=", value)

    def __gt__(self, value: Any) -> Predicate:
        return Compare(self.name, ">", value)

    def __ge__(self, value: Any) -> Predicate:
        return Compare(self.name, ">=", value)

    def __hash__(self) -> int:
        return hash(self.name)

    def isin(self, values: Iterable[Any]) -> Predicate:
        return IsIn(self.name, tuple(values))

    def is_null(self) -> Predicate:
        return IsNull(self.name)

    def is_not_null(self) -> Predicate:
        return IsNull(self.name, negated=True)

    def between(self, low: Any, high: Any) -> Predicate:
        return And(Compare(self.name, ">=", low), Compare(self.name, "<=", high))


def col(name: str) -> Column:
    """The column ``name`` of a predicate: ``col("id") > 10``, ``col("dt").is_in([...])``.
    Unknown columns are refused when a scan runs (``SchemaMismatchError``)."""
    return Column(name)


def apply_filter(table: pa.Table, predicate: Predicate | None) -> pa.Table:
    if predicate is None or table.num_rows == 0:
        return table
    try:
        return table.filter(predicate.to_arrow())
    except pa.ArrowNotImplementedError as exc:
        # e.g. comparing a nested (ARRAY, MAP, ROW) column with a value: only null checks apply.
        raise SchemaMismatchError(f"filter on {sorted(predicate.columns())} cannot be evaluated: {exc}") from exc


def conjuncts(predicate: Predicate) -> list[Predicate]:
    """The terms of a conjunction (the predicate itself when it is not an ``And``)."""
    if isinstance(predicate, And):
        return conjuncts(predicate.left) + conjuncts(predicate.right)
    return [predicate]


def restrict(predicate: Predicate | None, columns: set[str]) -> Predicate | None:
    """The conjunction of the terms of ``predicate`` that name only ``columns`` (None if none):
    implied by ``predicate``, so rows it rejects are rejected by ``predicate`` too."""
    if predicate is None:
        return None
    terms = [t for t in conjuncts(predicate) if t.columns() <= columns]
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = And(out, t)
    return out
