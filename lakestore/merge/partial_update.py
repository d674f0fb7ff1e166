"""The partial-update merge engine: a newer row's non-null fields overwrite; fields of a
``sequence-group`` are updated together, only by rows whose group sequence field is not older.

A group member with an aggregate function (``fields.<f>.aggregate-function``) is aggregated as
Paimon's PartialUpdateMergeFunction does: in sequence order, a row whose group sequence is not
older than the current one adds ``agg(acc, value)``, an older one ``agg(value, acc)``; rows with
only null sequence fields are skipped. Only Paimon's stateless functions are implemented
(``GROUP_FUNCTIONS``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lakestore.errors import MergeEngineError, OptionError, UnsupportedTableError
from lakestore.format.arrow_ops import as_numpy, from_numpy, indices
from lakestore.format.kv import DELETE, INSERT, VALUE_KIND
from lakestore.merge.aggregation import is_java_blank
from lakestore.merge.engine import (
    Groups,
    MergeEngine,
    delete_bases,
    drop_retracts,
    keep_lone_rows,
    last_valid_index,
    retract_mask,
    take_or_null,
)

GROUP_FUNCTIONS = ("sum", "product", "min", "max", "last_value", "last_non_null_value", "bool_and", "bool_or", "listagg")


def _agg(function: str, acc: Any, value: Any, delimiter: str) -> Any:
    """Paimon's FieldAggregator.agg(accumulator, input) of the stateless functions."""
    if function == "last_value":
        return value
    if function == "last_non_null_value":
        return acc if value is None else value
    if function == "listagg":  # Paimon 2.0: blank values skipped
        if value is None or is_java_blank(value):
            return acc
        if acc is None or is_java_blank(acc):
            return value
        return f"{acc}{delimiter}{value}"
    if acc is None or value is None:
        return value if acc is None else acc
    if function == "sum":
        return acc + value
    if function == "product":
        return acc * value
    if function == "min":
        return min(acc, value)
    if function == "max":
        return max(acc, value)
    if function == "bool_and":
        return acc and value
    return acc or value  # bool_or


def _sequence_key(values: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    """Orders group sequences as Paimon's comparator: field by field, null lowest."""
    return tuple((v is not None, v) for v in values)


class PartialUpdateEngine(MergeEngine):
    name = "partial-update"

    def __init__(
        self,
        *,
        value_columns: Sequence[str],
        sequence_groups: dict[str, tuple[str, ...]],
        ignore_delete: bool,
        functions: Mapping[str, str] | None = None,
        delimiters: Mapping[str, str] | None = None,
        remove_record_on_delete: bool = False,
        remove_record_on_sequence_group: Sequence[str] = (),
    ) -> None:
        self.value_columns = list(value_columns)
        self.ignore_delete = ignore_delete
        # Paimon's partial-update.remove-record-on-delete: a -D removes the key (its values seed
        # later rows), -U rows change nothing; conflicts with ignore-delete and sequence groups.
        self.remove_record_on_delete = self.keeps_deletes = remove_record_on_delete
        if remove_record_on_delete and ignore_delete:
            raise OptionError("ignore-delete and partial-update.remove-record-on-delete conflict (as in Paimon)")
        if remove_record_on_delete and sequence_groups:
            raise OptionError("sequence-group and partial-update.remove-record-on-delete conflict (as in Paimon)")
        self.functions = dict(functions or {})
        self.delimiters = dict(delimiters or {})
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
        for name, function in self.functions.items():
            if name not in self.group_of or self.group_of[name] == name or name in self._sequence_fields():
                raise OptionError(f"aggregate function of {name!r} needs the field in a sequence group (as Paimon)")
            if function not in GROUP_FUNCTIONS:
                raise UnsupportedTableError(
                    f"aggregate function {function!r} of {name!r} in a partial-update sequence group is not implemented",
                    options=(f"fields.{name}.aggregate-function",),
                )

        # Paimon's partial-update.remove-record-on-sequence-group: a -D whose group (named by a
        # sequence field) is not older removes the key; retractions of sequence groups
        # (retractWithSequenceGroup) are accepted when no group member aggregates
        self.delete_groups = tuple(dict.fromkeys(self.group_of[f] for f in remove_record_on_sequence_group if f in self.group_of))
        if len(self.delete_groups) != len(tuple(remove_record_on_sequence_group)) or any(
            f not in self._sequence_fields() for f in remove_record_on_sequence_group
        ):
            raise OptionError("partial-update.remove-record-on-sequence-group must name sequence fields of sequence groups (as Paimon)")
        if self.delete_groups and ignore_delete:
            raise OptionError("ignore-delete and partial-update.remove-record-on-sequence-group conflict (as in Paimon)")
        self.retracts_groups = bool(sequence_groups) and not self.functions and not ignore_delete
        self.keeps_deletes = self.keeps_deletes or self.retracts_groups

    def seeding_options(self) -> tuple[str, ...]:
        return tuple(
            key
            for key, on in (
                ("partial-update.remove-record-on-delete", self.remove_record_on_delete),
                ("partial-update.remove-record-on-sequence-group", bool(self.delete_groups)),
            )
            if on
        )

    def _sequence_fields(self) -> set[str]:
        return {f for seq in self.sequence_groups for f in seq.split(",")}

    def prepare_input(self, rows: pa.Table) -> pa.Table:
        if retract_mask(rows).any() and not self.remove_record_on_delete and not self.retracts_groups:
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
        if self.remove_record_on_delete or self.retracts_groups:
            retract = retract_mask(rows)
            if retract.any():
                if self.retracts_groups:
                    return self._merge_group_retracts(rows, groups, key_columns, retract)
                return self._merge_with_deletes(rows, groups, key_columns, retract)
        # A lone row is already merged, unless a sequence group must be nulled (null sequence).
        if groups.count == rows.num_rows and not self.sequence_groups and not self.functions:
            return rows
        winners = {s: self._group_winner(rows, groups, s) for s in self.sequence_groups}
        columns = []
        for name in rows.column_names:
            column = rows.column(name)
            if name in self.functions and name not in key_columns:
                columns.append(self._aggregate_in_group(rows, groups, name))
            elif name in self.value_columns and name not in key_columns:
                group = self.group_of.get(name)
                index = winners[group] if group is not None else last_valid_index(column, groups)
                columns.append(take_or_null(column, index))
            elif name == VALUE_KIND:
                columns.append(from_numpy(np.full(groups.count, INSERT, dtype=np.int8)))
            else:
                columns.append(column.take(indices(groups.lasts)))
        return pa.Table.from_arrays(columns, schema=rows.schema)

    def _merge_with_deletes(self, rows: pa.Table, groups: Groups, key_columns: Sequence[str], retract: np.ndarray) -> pa.Table:
        """Paimon's merge with ``remove-record-on-delete`` (no sequence groups): a -D restarts
        the key from the -D row's values, -U rows are skipped (a leading one still initialises the
        row), inserts overwrite with their non-null fields. DELETE when the last row is a -D or
        the key met no insert."""
        base = delete_bases(rows, groups)
        n = rows.num_rows
        positions = np.arange(n)
        lasts = groups.lasts
        columns = []
        for name in rows.column_names:
            column = rows.column(name)
            if name in self.value_columns and name not in key_columns:
                valid = as_numpy(pc.is_valid(column)) if column.null_count else np.ones(n, dtype=bool)
                latest = np.maximum.accumulate(np.where(valid & ~retract, positions, -1))[lasts]
                index = np.where((latest > base) & (latest >= groups.starts), latest, base)
                columns.append(take_or_null(column, index))
            elif name == VALUE_KIND:
                kinds = as_numpy(column)
                inserts = np.add.reduceat((~retract).astype(np.int64), groups.starts) if n else np.zeros(0, dtype=np.int64)
                deleted = (kinds[lasts] == DELETE) | (inserts == 0)
                columns.append(from_numpy(np.where(deleted, DELETE, INSERT).astype(np.int8)))
            else:
                columns.append(column.take(indices(lasts)))
        return keep_lone_rows(pa.Table.from_arrays(columns, schema=rows.schema), rows, groups)

    def _group_ranks(self, rows: pa.Table, seq_fields: str) -> np.ndarray:
        """Every row's group sequence as one dense rank (fields compared in order, null lowest);
        -1 where all the group's sequence fields are null (such a row never touches the group)."""
        n = rows.num_rows
        ranks = []
        all_null = np.ones(n, dtype=bool)
        for name in seq_fields.split(","):
            column = rows.column(name)
            rank = as_numpy(pc.rank(column, sort_keys="ascending", tiebreaker="dense")).astype(np.int64)
            null = as_numpy(pc.is_null(column))
            ranks.append(np.where(null, 0, rank))
            all_null &= null
        if len(ranks) == 1:
            composite = ranks[0]
        else:
            order = np.lexsort(tuple(reversed(ranks)))
            stacked = np.stack([r[order] for r in ranks])
            step = np.concatenate([[False], (stacked[:, 1:] != stacked[:, :-1]).any(axis=0)]) if n else np.zeros(0, dtype=bool)
            composite = np.empty(n, dtype=np.int64)
            composite[order] = np.cumsum(step) + 1
        return np.where(all_null, -1, composite)

    def _merge_group_retracts(self, rows: pa.Table, groups: Groups, key_columns: Sequence[str], retract: np.ndarray) -> pa.Table:
        """Paimon's PartialUpdateMergeFunction with sequence groups and retractions, record by
        record: a row whose group sequence is not older than the current one sets the group's
        sequence fields and members (a retraction sets the members null); a -D doing so for a
        group of ``remove-record-on-sequence-group`` resets the whole row to its values (later
        rows merge onto them); a leading retraction initialises the row. Found in rounds, one
        per reset, each vectorised over all keys."""
        n = rows.num_rows
        kinds = as_numpy(rows.column(VALUE_KIND))
        ranks = {g: self._group_ranks(rows, g) for g in self.sequence_groups}
        ids = groups.ids()
        sizes = groups.ends - groups.starts
        positions = np.arange(n)
        leading = retract[groups.starts]
        base = np.where(leading, groups.starts, -1)  # the row whose values are the state
        first = groups.starts.copy()  # the first row merged onto it
        if self.delete_groups and (kinds == DELETE).any():
            active = np.ones(groups.count, dtype=bool)
            while active.any():
                reset = np.zeros(n, dtype=bool)
                in_play = active[ids] & (positions >= np.repeat(first, sizes))
                for g in self.delete_groups:
                    rank = ranks[g]
                    state = np.where(base >= 0, rank[np.maximum(base, 0)], -1)
                    seen = np.where(in_play & (rank >= 0), rank, -1)
                    # running maximum within each key, before the row: offset keys apart
                    offset = ids.astype(np.int64) * (int(rank.max(initial=0)) + 3)
                    running = np.maximum.accumulate(seen + 1 + offset) - offset - 1
                    before = np.concatenate([[-1], running[:-1]]) if n else running
                    before = np.where(positions == np.repeat(groups.starts, sizes), -1, before)
                    current = np.maximum(before, state[ids])
                    reset |= in_play & (kinds == DELETE) & (rank >= 0) & (rank >= current)
                hit = np.where(reset, positions, n)
                found = np.minimum.reduceat(hit, groups.starts) if n else hit
                active = found < groups.ends
                base = np.where(active, found, base)
                first = np.where(active, found + 1, first)
        start_of_row = np.repeat(first, sizes)
        after = positions >= start_of_row
        has_base = base >= 0
        columns: dict[str, pa.Array] = {}
        for g, members in self.sequence_groups.items():
            rank = ranks[g]
            state = np.where(has_base, rank[np.maximum(base, 0)], -1)
            seen = np.where(after & (rank >= 0), rank, -1)
            best = np.maximum.reduceat(seen, groups.starts) if n else seen
            winner_rank = np.where(best >= state, best, -2)
            is_winner = after & (rank >= 0) & (rank == winner_rank[ids])
            winner = np.maximum.reduceat(np.where(is_winner, positions, -1), groups.starts) if n else is_winner
            took = winner >= 0
            for name in g.split(","):
                columns[name] = take_or_null(rows.column(name), np.where(took, winner, base))
            nulled = took & retract[np.maximum(winner, 0)]
            for name in members:
                columns[name] = take_or_null(rows.column(name), np.where(took, np.where(nulled, -1, winner), base))
        inserts = ~retract
        for name in self.value_columns:
            if name in columns or name in key_columns:
                continue
            column = rows.column(name)
            valid = as_numpy(pc.is_valid(column)) if column.null_count else np.ones(n, dtype=bool)
            latest = np.maximum.accumulate(np.where(valid & inserts & after, positions, -1))[groups.lasts]
            columns[name] = take_or_null(column, np.where(latest >= groups.starts, latest, base))
        met_insert = np.add.reduceat(inserts.astype(np.int64), groups.starts) > 0
        deleted = (base == groups.lasts) & (kinds[groups.lasts] == DELETE) & (first > groups.lasts)
        out = []
        for name in rows.column_names:
            if name in columns:
                out.append(columns[name])
            elif name == VALUE_KIND:
                out.append(from_numpy(np.where(deleted | ~met_insert, DELETE, INSERT).astype(np.int8)))
            else:
                out.append(rows.column(name).take(indices(groups.lasts)))
        return keep_lone_rows(pa.Table.from_arrays(out, schema=rows.schema), rows, groups)

    def _aggregate_in_group(self, rows: pa.Table, groups: Groups, name: str) -> pa.Array:
        function, delimiter = self.functions[name], self.delimiters.get(name, ",")
        sequences = list(zip(*(rows.column(f).to_pylist() for f in self.group_of[name].split(",")), strict=True))
        values = rows.column(name).to_pylist()
        out = []
        for start, end in zip(groups.starts.tolist(), groups.ends.tolist(), strict=True):
            acc, current = None, None
            for row in range(start, end):
                sequence = sequences[row]
                if all(v is None for v in sequence):
                    continue  # a null group sequence never touches the group
                key = _sequence_key(sequence)
                if current is None or key >= current:
                    acc, current = _agg(function, acc, values[row], delimiter), key
                else:
                    acc = _agg(function, values[row], acc, delimiter)  # aggReversed
            out.append(acc)
        return pa.array(out, rows.column(name).type)
