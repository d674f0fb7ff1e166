"""Cross-partition upsert: ``bucket = -1`` with a primary key that lacks partition keys (Paimon's
``BucketMode.KEY_DYNAMIC``).

A key may live in any partition, so a write must find where each incoming key already lives.
Paimon's ``GlobalIndexAssigner`` keeps a key -> (partition, bucket) index, bootstrapped
(``IndexBootstrap``) from the primary keys of the table's live rows, each with the partition and
bucket of its split; no index file is written (the table holds data files only). A key found in
another partition than the incoming row's is handled by the merge engine's
``ExistingProcessor``:

- deduplicate (``DeleteExistingProcessor``): a -D of the key in its old (partition, bucket), then
  the row goes to its own partition as a new key;
- partial-update and aggregation (``UseOldExistingProcessor``): the row goes to the old
  partition and bucket, its partition columns set to the old partition's values;
- first-row (``SkipNewExistingProcessor``): the row is dropped.

New keys get buckets from Paimon's ``crosspartition.BucketAssigner``: per partition, the key
count of every bucket (bootstrapped from the live keys, less the keys deduplicate moved away),
a new key going to the lowest bucket holding fewer than ``dynamic-bucket.target-row-num`` keys,
else to the lowest bucket not used yet.

lakestore does this per input batch, vectorised over the batch's keys (one key-code match
against the index, NumPy grouping; Python loops run per partition). Where several rows of a key
arrive in one batch, the outcome per key follows Paimon's rule for the key's rows taken
together: deduplicate keeps the rows in the partition of the key's last row (Paimon writes and
then retracts the key in the partitions it passes through on the way; the merged result is the
same), partial-update/aggregation send every row to the key's old partition (or, for a new key,
to its first row's partition), first-row keeps the rows in that partition. Buckets match
Paimon's when no key moves within the batch; with moves, lakestore frees the moved keys' places
before placing the batch's new keys (Paimon interleaves both in arrival order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from lakestore.format.arrow_ops import from_numpy, from_pylist, indices, key_codes, positions_in
from lakestore.format.kv import DELETE
from lakestore.meta.schema import TableSchema
from lakestore.meta.snapshot import Snapshot
from lakestore.write.input import partition_groups

KIND_COLUMN = "__kind"


# snapshot -> (partition values, bucket, the primary keys of its live rows) per (partition, bucket)
LiveKeys = Callable[[Snapshot], Iterable[tuple[tuple[Any, ...], int, pa.Table]]]


def _first_positions(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct codes, position of each one's first occurrence, each row's distinct index)."""
    distinct, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    return distinct, first, inverse.reshape(-1)


class BucketCounts:
    """Paimon's ``crosspartition.BucketAssigner``: per partition id, the key count of each bucket."""

    def __init__(self, target_row_num: int) -> None:
        self.target = target_row_num
        self._counts: dict[int, dict[int, int]] = {}

    def add(self, part: np.ndarray, bucket: np.ndarray, delta: int) -> None:
        """Adds ``delta`` to the count of each (part, bucket) pair listed (pairs may repeat)."""
        if not len(part):
            return
        pairs, counts = np.unique(np.stack([part.astype(np.int64), bucket.astype(np.int64)]), axis=1, return_counts=True)
        for p, b, n in zip(pairs[0].tolist(), pairs[1].tolist(), counts.tolist(), strict=True):
            buckets = self._counts.setdefault(p, {})
            buckets[b] = max(buckets.get(b, 0) + delta * n, 0)

    def assign(self, part: int, count: int) -> np.ndarray:
        """Buckets of ``count`` new keys of partition ``part``, in order: the buckets with room
        from the lowest, then the lowest unused buckets."""
        buckets = self._counts.setdefault(part, {})
        taken: list[tuple[int, int]] = []
        remaining = count
        for bucket in sorted(buckets):
            if not remaining:
                break
            room = self.target - buckets[bucket]
            if room > 0:
                take = min(room, remaining)
                taken.append((bucket, take))
                buckets[bucket] += take
                remaining -= take
        candidate = 0
        while remaining:
            while candidate in buckets:
                candidate += 1
            take = min(self.target, remaining)
            taken.append((candidate, take))
            buckets[candidate] = take
            remaining -= take
        if not taken:
            return np.zeros(0, dtype=np.int32)
        return np.repeat(np.array([b for b, _ in taken], dtype=np.int32), [n for _, n in taken])


class CrossPartitionIndex:
    """The key -> (partition, bucket) index of one write, and the routing of its batches."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self.keys = list(schema.primary_keys)
        self.partition_keys = list(schema.partition_keys)
        self.engine = schema.core_options().merge_engine
        arrow = schema.arrow_schema()
        self._key_schema = pa.schema([arrow.field(k) for k in self.keys])
        self._partition_schema = pa.schema([arrow.field(k) for k in self.partition_keys])
        self._part_ids: dict[tuple[Any, ...], int] = {}
        self._part_values: list[tuple[Any, ...]] = []
        self._index_keys = self._key_schema.empty_table()
        self._index_part = np.zeros(0, dtype=np.int64)
        self._index_bucket = np.zeros(0, dtype=np.int32)
        self.counts = BucketCounts(schema.core_options().dynamic_bucket_target_row_num)

    def _part_id(self, values: tuple[Any, ...]) -> int:
        found = self._part_ids.get(values)
        if found is None:
            found = self._part_ids[values] = len(self._part_values)
            self._part_values.append(values)
        return found

    def bootstrap(self, live_keys: Iterable[tuple[tuple[Any, ...], int, pa.Table]]) -> None:
        """Paimon's ``IndexBootstrap``: the primary keys of the live rows, per (partition values,
        bucket)."""
        tables, parts, buckets = [], [], []
        for partition_values, bucket, rows in live_keys:
            keys = rows.select(self.keys).cast(self._key_schema)
            if not keys.num_rows:
                continue
            tables.append(keys)
            parts.append(np.full(keys.num_rows, self._part_id(partition_values), dtype=np.int64))
            buckets.append(np.full(keys.num_rows, bucket, dtype=np.int32))
        if not tables:
            return
        self._index_keys = pa.concat_tables(tables)
        self._index_part = np.concatenate(parts)
        self._index_bucket = np.concatenate(buckets)
        self.counts.add(self._index_part, self._index_bucket, 1)

    def _partition_table(self, part_ids: np.ndarray) -> pa.Table:
        columns = list(zip(*self._part_values, strict=True)) if self._part_values else [() for _ in self.partition_keys]
        table = pa.table(
            [from_pylist(list(values), f.type) for values, f in zip(columns, self._partition_schema, strict=True)],
            schema=self._partition_schema,
        )
        return table.take(indices(part_ids))

    def _with_partition(self, rows: pa.Table, part_ids: np.ndarray) -> pa.Table:
        """``rows`` with their partition columns set to the values of ``part_ids``."""
        values = self._partition_table(part_ids)
        for name in self.partition_keys:
            rows = rows.set_column(rows.schema.get_field_index(name), rows.schema.field(name), values.column(name))
        return rows

    def route(self, rows: pa.Table) -> tuple[pa.Table, np.ndarray]:
        """The rows to write (``rows`` with the ``__kind`` column, moved, dropped or with
        retractions added per the merge engine's rule) and the bucket of each."""
        n = rows.num_rows
        row_part = np.empty(n, dtype=np.int64)
        for values, positions in partition_groups(rows, self.partition_keys):
            row_part[positions] = self._part_id(values)
        row_codes, index_codes = key_codes([rows.select(self.keys), self._index_keys], self.keys)
        _, first, inverse = _first_positions(row_codes)
        _, last_reversed, _ = _first_positions(row_codes[::-1])
        last = n - 1 - last_reversed
        at, found = positions_in(row_codes[first], index_codes)
        old_part = np.where(found, self._index_part[at] if len(at) and len(self._index_part) else -1, -1)
        old_bucket = np.where(found, self._index_bucket[at] if len(at) and len(self._index_bucket) else -1, -1)

        # where each key of the batch lives after it
        target = row_part[last] if self.engine == "deduplicate" else np.where(found, old_part, row_part[first])
        row_target = target[inverse]
        keep = np.ones(n, dtype=bool) if self.engine in ("partial-update", "aggregation") else row_part == row_target

        moved = found & (old_part != target)
        retract_keys = np.flatnonzero(moved) if self.engine == "deduplicate" else np.zeros(0, dtype=np.int64)
        if len(retract_keys):
            self.counts.add(old_part[retract_keys], old_bucket[retract_keys], -1)

        # buckets: a key staying in its partition keeps its bucket; the others are new there
        bucket = np.where(found & ~moved, old_bucket, -1).astype(np.int32)
        if self.engine in ("partial-update", "aggregation"):
            bucket = np.where(found, old_bucket, bucket).astype(np.int32)
        new_keys = np.flatnonzero(bucket < 0)
        if len(new_keys):
            # each new key is placed when its first kept row arrives
            kept_positions = np.flatnonzero(keep)
            kept_first = np.full(len(first), n, dtype=np.int64)
            np.minimum.at(kept_first, inverse[kept_positions], kept_positions)
            order = new_keys[np.argsort(kept_first[new_keys], kind="stable")]
            parts = target[order]
            for part in np.unique(parts).tolist():
                chosen = order[parts == part]
                bucket[chosen] = self.counts.assign(int(part), len(chosen))

        # the index after this batch: every key of the batch where it now lives
        known = np.flatnonzero(found)
        self._index_part[at[known]] = target[known]
        self._index_bucket[at[known]] = bucket[known]
        fresh = np.flatnonzero(~found)
        if len(fresh):
            added = rows.select(self.keys).take(indices(first[fresh])).cast(self._key_schema)
            self._index_keys = pa.concat_tables([self._index_keys, added]).combine_chunks()
            self._index_part = np.concatenate([self._index_part, target[fresh]])
            self._index_bucket = np.concatenate([self._index_bucket, bucket[fresh]])

        out = rows
        if not keep.all():
            out = out.filter(from_numpy(keep))
        out_part = row_target[keep]
        if self.engine in ("partial-update", "aggregation") and (row_part != row_target).any():
            out = self._with_partition(out, out_part)
        out_bucket = bucket[inverse][keep]
        if len(retract_keys):
            retract = self._with_partition(rows.take(indices(last[retract_keys])), old_part[retract_keys])
            kinds = from_numpy(np.full(len(retract_keys), DELETE, dtype=np.int8))
            retract = retract.set_column(
                retract.schema.get_field_index(KIND_COLUMN), KIND_COLUMN, kinds.cast(rows.schema.field(KIND_COLUMN).type)
            )
            out = pa.concat_tables([retract, out.cast(retract.schema)])
            out_bucket = np.concatenate([old_bucket[retract_keys].astype(np.int32), out_bucket])
        return out, np.ascontiguousarray(out_bucket, dtype=np.int32)
