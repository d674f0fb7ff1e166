"""The partial-update merge engine: a newer row's non-null fields overwrite; fields of a
``sequence-group`` are updated together, only by rows whose group sequence field is not older."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import MergeEngineError, OptionError
from lakestore.format.arrow_ops import as_numpy, from_numpy, indices
from lakestore.format.kv import INSERT, VALUE_KIND
from lakestore.merge.engine import Groups, MergeEngine, drop_retracts, last_valid_index, retract_mask, take_or_null


class PartialUpdateEngine(MergeEngine):
    name = "partial-update"

    def __init__(self, *, value_columns: Sequence[str], sequence_groups: dict[str, tuple[str, ...]], ignore_delete: bool) -> None:
        self.value_columns = list(value_columns)
        self.ignore_delete = ignore_delete
        self.group_of: dict[str, str] = {}
        for seq_fields, members in sequence_groups.items():
            # ``fields.<s1>,<s2>.sequence-group``: the group's sequence is (s1, s2), compared in order
            for seq_field in seq_fields.split(","):
                if seq_field not in value_columns:
                    raise OptionError(f"sequence-group field {seq_field!r} is not a column")
                self.group_of[seq_field] = seq_fields
            for member in members:
                if member not in value_columns:
                    raise OptionError(f"sequence-group of {seq_fields!r} names unknown column {member!r}")
                self.group_of[member] = seq_fields
        self.sequence_groups = sequence_groups

    def prepare_input(self, rows: pa.Table) -> pa.Table:
        if retract_mask(rows).any():
            if not self.ignore_delete:
                raise MergeEngineError(
                    "the partial-update merge engine cannot accept -U/-D rows; set 'partial-update.ignore-delete' = 'true' to drop them"
                )
            return drop_retracts(rows)
        return rows

    def _group_winner(self, rows: pa.Table, groups: Groups, seq_fields: str) -> np.ndarray:
        """Per key group, the row whose group sequence (the ``seq_fields``, compared in order,
        null lowest) is greatest (ties: newest), or -1 when every row of the group has only null
        sequence fields: as in Paimon, such a row never updates its group, so the group stays
        null."""
        n = rows.num_rows
        ranks = []
        all_null = np.ones(n, dtype=bool)
        for name in seq_fields.split(","):
            column = rows.column(name)
            # Dense rank orders any comparable type; nulls are forced lowest (rank -1).
            rank = as_numpy(pc.rank(column, sort_keys="ascending", tiebreaker="dense")).astype(np.int64)
            null = as_numpy(pc.is_null(column))
            ranks.append(np.where(null, -1, rank))
            all_null &= null
        order = np.lexsort((np.arange(n), *reversed(ranks), groups.ids()))
        # After sorting by (group, sequence, position) the winner is the last row of each group.
        winners = order[groups.lasts]
        return np.where(all_null[winners], -1, winners)

    def merge(self, rows: pa.Table, key_columns: Sequence[str]) -> pa.Table:
        if rows.num_rows == 0:
            return rows
        groups = Groups.of(rows, key_columns)
        # A lone row is already merged, unless a sequence group must be nulled (null sequence).
        if groups.count == rows.num_rows and not self.sequence_groups:
            return rows
        winners = {s: self._group_winner(rows, groups, s) for s in self.sequence_groups}
        columns = []
        for name in rows.column_names:
            column = rows.column(name)
            if name in self.value_columns and name not in key_columns:
                group = self.group_of.get(name)
                index = winners[group] if group is not None else last_valid_index(column, groups)
                columns.append(take_or_null(column, index))
            elif name == VALUE_KIND:
                columns.append(from_numpy(np.full(groups.count, INSERT, dtype=np.int8)))
            else:
                columns.append(column.take(indices(groups.lasts)))
        return pa.Table.from_arrays(columns, schema=rows.schema)
