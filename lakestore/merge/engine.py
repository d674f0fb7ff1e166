"""Merge engines: how the rows of one primary key combine. One interface, used by the write
buffer's flush, by merge-on-read and by compaction, so the three cannot drift.

Input to ``merge`` is a table sorted by (key, sequence fields, ``_SEQUENCE_NUMBER``), stable, so
that the newest version of a key is the last of its group. Output has one row per key, sorted by
key, whose ``_VALUE_KIND`` says whether the merged result is a value (+I/+U) or a retraction.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import OptionError
from lakestore.format.arrow_ops import group_last, group_starts
from lakestore.format.kv import DELETE, UPDATE_BEFORE, VALUE_KIND
from lakestore.meta.schema import TableSchema


class MergeEngine(ABC):
    name: str

    @abstractmethod
    def merge(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        """One row per key from key-sorted rows (see module doc)."""

    def merge_and_drop_retracts(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        """Merge, then drop keys whose merged result is a retraction (reads, last-level compaction)."""
        return drop_retracts(self.merge(rows, key_columns))


def drop_retracts(rows: pa.Table) -> pa.Table:
    kinds = rows.column(VALUE_KIND)
    if rows.num_rows == 0:
        return rows
    is_retract = pc.or_(pc.equal(kinds, UPDATE_BEFORE), pc.equal(kinds, DELETE))
    if not pc.any(is_retract).as_py():
        return rows
    return rows.filter(pc.invert(is_retract))


def retract_count(kinds: pa.Array | pa.ChunkedArray) -> int:
    values = np.asarray(kinds.to_numpy() if isinstance(kinds, pa.Array) else kinds.to_numpy(), dtype=np.int8)
    return int(np.count_nonzero((values == UPDATE_BEFORE) | (values == DELETE)))


class DeduplicateEngine(MergeEngine):
    """The newest row of a key wins; a newest -U/-D removes the key."""

    name = "deduplicate"

    def merge(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        if rows.num_rows <= 1:
            return rows
        starts = group_starts(rows, key_columns)
        if len(starts) == rows.num_rows:
            return rows
        return rows.take(pa.array(group_last(starts, rows.num_rows)))


def create_merge_engine(schema: TableSchema) -> MergeEngine:
    engine = schema.core_options().merge_engine
    if engine == "deduplicate":
        return DeduplicateEngine()
    raise OptionError(f"merge-engine {engine!r} is not implemented yet")
