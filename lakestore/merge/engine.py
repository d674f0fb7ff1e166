"""Merge engines: how the rows of one primary key combine. One interface, used by the write
buffer's flush, by merge-on-read and by compaction, so the three cannot drift.

Input to ``merge`` is a table sorted (stably) by (key, sequence fields, ``_SEQUENCE_NUMBER``), so
the newest version of a key is the last of its group. Output has one row per key, sorted by key,
whose ``_VALUE_KIND`` says whether the merged result is a value (+I/+U) or a retraction.
Everything is vectorised: group boundaries from the sorted key, then per-column kernels.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import MergeEngineError
from lakestore.format.arrow_ops import as_numpy, group_last, group_starts, indices
from lakestore.format.arrow_ops import mask as arrow_mask
from lakestore.format.kv import DELETE, INSERT, UPDATE_BEFORE, VALUE_KIND


@dataclass(frozen=True)
class Groups:
    """Contiguous key groups of a sorted table."""

    starts: np.ndarray
    ends: np.ndarray  # exclusive

    @classmethod
    def of(cls, rows: pa.Table, key_columns: Sequence[str]) -> Groups:
        starts = group_starts(rows, key_columns)
        return cls(starts, group_last(starts, rows.num_rows) + 1)

    @property
    def count(self) -> int:
        return int(self.starts.shape[0])

    @property
    def lasts(self) -> np.ndarray:
        return self.ends - 1

    def ids(self) -> np.ndarray:
        """Group id of every row."""
        return np.repeat(np.arange(self.count), self.ends - self.starts)


def _is_retract(kinds: pa.Array | pa.ChunkedArray) -> np.ndarray:
    values = as_numpy(kinds.fill_null(INSERT) if kinds.null_count else kinds)
    return (values == UPDATE_BEFORE) | (values == DELETE)


def retract_mask(rows: pa.Table) -> np.ndarray:
    return _is_retract(rows.column(VALUE_KIND))


def drop_retracts(rows: pa.Table) -> pa.Table:
    if rows.num_rows == 0:
        return rows
    mask = retract_mask(rows)
    return rows.filter(arrow_mask(~mask)) if mask.any() else rows


def retract_count(kinds: pa.Array | pa.ChunkedArray) -> int:
    return int(np.count_nonzero(_is_retract(kinds)))


class MergeEngine(ABC):
    name: str
    # ``sequence.field.sort-order`` = descending: the sequence fields, sorted descending (nulls
    # still first) wherever rows are ordered for ``merge``, so the smallest value wins.
    descending_fields: tuple[str, ...] = ()
    # ``*.remove-record-on-delete``: a key's DELETE result keeps the -D row's values, which seed
    # what later rows of the key merge onto (Paimon's initRow), so writers keep it in level 0.
    keeps_deletes: bool = False

    def seeding_options(self) -> tuple[str, ...]:
        """The options set on this engine under which a -D's values seed the key's later rows."""
        return ()

    def prepare_input(self, rows: pa.Table) -> pa.Table:
        """Normalise freshly written rows (with ``_VALUE_KIND``) before they are buffered."""
        return rows

    @abstractmethod
    def merge(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        """One row per key from key-sorted rows (see module doc)."""

    def merge_and_drop_retracts(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        """Merge, then drop keys whose merged result is a retraction (reads, last-level compaction)."""
        return drop_retracts(self.merge(rows, key_columns))

    def pick(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
        """For engines whose result is one input row per key: that row's position in the
        key-sorted order, given each key group's [start, end). Lets readers take the winning
        rows straight from the unsorted input in one pass. None: the engine combines rows."""
        return None


class _SingleRowEngine(MergeEngine):
    """Engines whose result is one of the key's input rows, chosen by ``pick``."""

    @abstractmethod
    def pick(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray: ...

    def merge(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        if rows.num_rows <= 1:
            return rows
        groups = Groups.of(rows, key_columns)
        if groups.count == rows.num_rows:
            return rows
        return rows.take(indices(self.pick(groups.starts, groups.ends)))


class DeduplicateEngine(_SingleRowEngine):
    """The newest row of a key wins; a newest -U/-D removes the key. With ``ignore-delete``,
    -U/-D rows are dropped when written, as Paimon's RowKindFilter and merge function do."""

    name = "deduplicate"

    def __init__(self, *, ignore_delete: bool = False) -> None:
        self.ignore_delete = ignore_delete

    def prepare_input(self, rows: pa.Table) -> pa.Table:
        if self.ignore_delete and retract_mask(rows).any():
            return drop_retracts(rows)
        return rows

    def pick(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        return ends - 1


class FirstRowEngine(_SingleRowEngine):
    """The oldest row of a key wins. Retractions are refused unless ``ignore-delete``."""

    name = "first-row"

    def __init__(self, *, ignore_delete: bool) -> None:
        self.ignore_delete = ignore_delete

    def prepare_input(self, rows: pa.Table) -> pa.Table:
        if retract_mask(rows).any():
            if not self.ignore_delete:
                raise MergeEngineError("the first-row merge engine cannot accept -U/-D rows; set 'ignore-delete' = 'true' to drop them")
            return drop_retracts(rows)
        return rows

    def pick(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        return starts


def last_valid_index(column: pa.ChunkedArray | pa.Array, groups: Groups) -> np.ndarray:
    """Per group, the row index of the last non-null value, or -1 when the group has none."""
    n = len(column)
    valid = as_numpy(pc.is_valid(column)) if column.null_count else np.ones(n, dtype=bool)
    index = np.where(valid, np.arange(n), -1)
    running = np.maximum.accumulate(index) if n else index
    at_end = running[groups.lasts]
    return np.where(at_end >= groups.starts, at_end, -1)


def first_valid_index(column: pa.ChunkedArray | pa.Array, groups: Groups) -> np.ndarray:
    n = len(column)
    valid = as_numpy(pc.is_valid(column)) if column.null_count else np.ones(n, dtype=bool)
    index = np.where(valid, np.arange(n), n)
    running = np.minimum.accumulate(index[::-1])[::-1] if n else index
    at_start = running[groups.starts]
    return np.where(at_start < groups.ends, at_start, -1)


def delete_bases(rows: pa.Table, groups: Groups, *, leading: bool = True) -> np.ndarray:
    """Per key group, where a ``remove-record-on-delete`` merge restarts: the last -D row, else
    (``leading``, partial-update) the first row when it is a retraction (Paimon initialises the
    row from a leading retraction), else -1. The result holds that row's values with later rows
    merged onto them."""
    values = as_numpy(rows.column(VALUE_KIND))
    n = rows.num_rows
    running = np.maximum.accumulate(np.where(values == DELETE, np.arange(n), -1)) if n else np.zeros(0, dtype=np.int64)
    last_delete = running[groups.lasts] if n else running
    first = _is_retract(rows.column(VALUE_KIND))[groups.starts] if n and leading else np.zeros(groups.count, dtype=bool)
    return np.where(last_delete >= groups.starts, last_delete, np.where(first, groups.starts, -1))


def keep_lone_rows(merged: pa.Table, rows: pa.Table, groups: Groups) -> pa.Table:
    """``merged`` (one row per group) with every group of one row replaced by that row as it was:
    Paimon's ReducerMergeFunctionWrapper hands a lone record on without merging it."""
    lone = (groups.ends - groups.starts) == 1
    if not lone.any():
        return merged
    both = pa.concat_tables([merged, rows.select(merged.column_names).cast(merged.schema)])
    return both.take(indices(np.where(lone, groups.count + groups.starts, np.arange(groups.count))))


def take_or_null(column: pa.ChunkedArray | pa.Array, index: np.ndarray) -> pa.Array:
    """column[index] with -1 meaning null."""
    mask = index < 0
    if mask.all():
        # Nothing to take (e.g. an aggregate over groups that hold only nulls: the grouped
        # result is empty, so even index 0 would be out of bounds).
        return pa.nulls(len(index), column.type)
    taken = column.take(indices(np.where(mask, 0, index)))
    if isinstance(taken, pa.ChunkedArray):
        taken = taken.combine_chunks()
    if not mask.any():
        return taken
    return pc.if_else(arrow_mask(mask), pa.nulls(len(index), taken.type), taken)
