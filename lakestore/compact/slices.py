"""Reading overlapping sorted runs in key-range slices, so that a compaction holds a slice of a
section in memory rather than the whole section.

Every input file is sorted by key. Each file is streamed batch by batch; the bound of a step is
the smallest of the unfinished files' last buffered keys: no unread row of any file can have a
smaller key, so every buffered row below the bound is complete and leaves in this step. All the
rows of one key thus land in one slice, in ``files`` order (where concatenating the whole
section would put them: a stable sort keeps the same order), and slices come out in ascending
key order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from lakestore.meta.manifest import DataFileMeta

FileBatches = Callable[[DataFileMeta], Iterator[pa.Table]]


class _OnDisk(Protocol):
    @property
    def file_size(self) -> int: ...


F = TypeVar("F", bound=_OnDisk)

BATCH_ROWS = 1 << 16  # rows read from a file at a time
SLICE_BYTES = 64 << 20  # rows gathered before a slice is merged
_EXPANSION = 8  # generous bytes in memory per byte of a data file on disk


class _Cursor:
    """One file's stream and its buffered rows (all at or above the last bound)."""

    def __init__(self, batches: Iterator[pa.Table]) -> None:
        self._batches = batches
        self.buffer: pa.Table | None = None
        self.done = False
        self.refill()

    def refill(self) -> None:
        for batch in self._batches:
            if batch.num_rows:
                if self.buffer is None or not self.buffer.num_rows:
                    self.buffer = batch
                else:  # the few rows left at the bound: one chunk, so chunks do not pile up
                    self.buffer = pa.concat_tables([self.buffer.combine_chunks(), batch])
                return
        self.done = True

    def last_key(self, key_names: Sequence[str]) -> pa.Table:
        assert self.buffer is not None
        return self.buffer.select(list(key_names)).slice(self.buffer.num_rows - 1, 1)

    def take_below(self, key_names: Sequence[str], bound: pa.Table) -> pa.Table | None:
        """Removes and returns the buffered rows whose key is below ``bound`` (a one-row table)."""
        if self.buffer is None or not self.buffer.num_rows:
            return None
        below = _less(self.buffer, key_names, bound)
        taken = self.buffer.filter(below)
        if not taken.num_rows:
            return None
        self.buffer = self.buffer.filter(pc.invert(below))
        return taken


def _less(rows: pa.Table, key_names: Sequence[str], bound: pa.Table) -> pa.ChunkedArray | pa.Array:
    """Row-wise ``key < bound`` in lexicographic key order (primary keys hold no nulls)."""
    result = None
    equal_so_far = None
    for name in key_names:
        column = rows.column(name)
        value = bound.column(name)[0]
        less = pc.less(column, value)
        term = less if equal_so_far is None else pc.and_(equal_so_far, less)
        result = term if result is None else pc.or_(result, term)
        equal = pc.equal(column, value)
        equal_so_far = equal if equal_so_far is None else pc.and_(equal_so_far, equal)
    assert result is not None
    return pc.fill_null(result, False)


def key_slices(
    files: Sequence[F],
    batches: Callable[[F], Iterator[pa.Table]],
    key_names: Sequence[str],
    *,
    slice_bytes: int = SLICE_BYTES,
) -> Iterator[pa.Table]:
    """The rows of ``files`` (one section of overlapping sorted runs) in slices of disjoint,
    ascending key ranges of about ``slice_bytes`` each; a key's rows in ``files`` order."""
    keys = list(key_names)
    if sum(f.file_size for f in files) * _EXPANSION <= slice_bytes:
        # a section that fits one slice (the common writer compaction): no bounds to find
        whole = [batch for f in files for batch in batches(f)]
        if whole:
            yield pa.concat_tables(whole)
        return
    cursors = [_Cursor(batches(f)) for f in files]
    gathered: list[pa.Table] = []
    gathered_bytes = 0
    while True:
        active = [i for i, c in enumerate(cursors) if not c.done]
        if not active:
            gathered += [c.buffer for c in cursors if c.buffer is not None and c.buffer.num_rows]
            break
        lasts = pa.concat_tables([cursors[i].last_key(keys) for i in active])
        lowest = active[pc.sort_indices(lasts, sort_keys=[(k, "ascending") for k in keys])[0].as_py()]
        bound = cursors[lowest].last_key(keys)
        for c in cursors:
            taken = c.take_below(keys, bound)
            if taken is not None:
                gathered.append(taken)
                gathered_bytes += taken.nbytes
        # the file that set the bound has only rows at the bound left: read on
        cursors[lowest].refill()
        if gathered_bytes >= slice_bytes:
            yield pa.concat_tables(gathered)
            gathered, gathered_bytes = [], 0
    if gathered:
        yield pa.concat_tables(gathered)
